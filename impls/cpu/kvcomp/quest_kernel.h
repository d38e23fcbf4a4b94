// quest's page bounds on the CPU (quest_kernel.inl; semantics: reference/kvcomp/quest.cpp).
#pragma once

#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"

namespace attnbench::cpu::quest {

inline constexpr int64_t kMaxHeadDim = 512;  // the schema's bound

struct Kernels {
  int64_t vector_width;
  // n elements of a storage-dtype row into fp32, zero-filled up to dp.
  void (*widen)(const void* src, DType dtype, int64_t n, int64_t dp, float* dst);
  // U_p = (1/group)·Σ_h Σ_c max(q_{h,c}·kmax_{p,c}, q_{h,c}·kmin_{p,c}) for `pages` consecutive
  // pages of one KV head, each written `page_size` times (one score per candidate token). q: the
  // group's queries as fp32 rows of `dp` floats (zero-padded past head_dim).
  void (*bounds)(const float* q, int64_t group, int64_t dp, const void* kmin, const void* kmax, DType dtype,
                 int64_t head_dim, int64_t pages, int64_t page_size, float* scores);
};

}  // namespace attnbench::cpu::quest

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(quest::Kernels);
}
