// One element of a storage-dtype buffer (f32, f16, bf16) as fp32, and one fp32 value rounded into
// one (to nearest even): the scalar access of the row passes that are not worth an ISA table.
#pragma once

#include <cstdint>

#include "attnbench/dtype.h"

namespace attnbench::cpu {

inline float element_f32(const void* base, DType t, int64_t i) {
  switch (t) {
    case DType::f16: return f16_to_f32(static_cast<const uint16_t*>(base)[i]);
    case DType::bf16: return bf16_to_f32(static_cast<const uint16_t*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

inline void set_element(void* base, DType t, int64_t i, float v) {
  switch (t) {
    case DType::f16: static_cast<uint16_t*>(base)[i] = f32_to_f16(v); break;
    case DType::bf16: static_cast<uint16_t*>(base)[i] = f32_to_bf16(v); break;
    default: static_cast<float*>(base)[i] = v;
  }
}

}  // namespace attnbench::cpu
