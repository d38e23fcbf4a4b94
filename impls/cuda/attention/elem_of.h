// The kernels' element type of a case dtype, for the host code of every CUDA impl (nullopt for a
// dtype no kernel takes).
#pragma once

#include <optional>

#include "attention_launch.h"
#include "attnbench/dtype.h"

namespace attnbench::cuda {

inline std::optional<attn::Elem> elem_of(DType t) {
  switch (t) {
    case DType::f32: return attn::Elem::f32;
    case DType::f16: return attn::Elem::f16;
    case DType::bf16: return attn::Elem::bf16;
    default: return std::nullopt;
  }
}

}  // namespace attnbench::cuda
