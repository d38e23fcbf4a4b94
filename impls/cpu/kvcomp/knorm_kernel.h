// knorm's score kernel on the CPU (knorm_kernel.inl): the scores of `keys` consecutive keys.
#pragma once

#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"

namespace attnbench::cpu::knorm {

inline constexpr int64_t kMaxHeadDim = 512;  // the schema's bound

struct Kernels {
  void (*scores)(const void* k, DType dtype, int64_t keys, int64_t head_dim, float* out);
};

}  // namespace attnbench::cpu::knorm

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(knorm::Kernels);
}
