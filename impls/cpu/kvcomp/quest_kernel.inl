// quest's page bounds, compiled once per ISA (runtime/isa.h). See quest_kernel.h. The page's two
// summary rows are widened to fp32 once and serve every head of the group.

#include "quest_kernel.h"

#include <algorithm>

namespace attnbench::cpu::quest::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
constexpr int W = S::W;

void widen(const void* src, DType dtype, int64_t n, int64_t dp, float* dst) { row_to_f32<S>(src, dtype, n, dp, dst); }

void bounds(const float* q, int64_t group, int64_t dp, const void* kmin, const void* kmax, DType dtype, int64_t d,
            int64_t pages, int64_t page_size, float* scores) {
  alignas(64) float lo[kMaxHeadDim + 64], hi[kMaxHeadDim + 64];
  const size_t bytes = static_cast<size_t>(d) * dtype_size(dtype);
  const float inv_group = 1.0f / static_cast<float>(group);
  for (int64_t p = 0; p < pages; ++p) {
    row_to_f32<S>(static_cast<const char*>(kmin) + p * bytes, dtype, d, dp, lo);
    row_to_f32<S>(static_cast<const char*>(kmax) + p * bytes, dtype, d, dp, hi);
    S::V acc = S::zero();
    for (int64_t h = 0; h < group; ++h)
      for (int64_t x = 0; x < dp; x += W) {
        const S::V qx = S::load(q + h * dp + x);
        acc = S::add(acc, S::max(S::mul(qx, S::load(hi + x)), S::mul(qx, S::load(lo + x))));
      }
    std::fill(scores + p * page_size, scores + (p + 1) * page_size, S::hsum(acc) * inv_group);
  }
}

}  // namespace attnbench::cpu::quest::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const quest::Kernels& isa_kernels<quest::Kernels, Isa::ATTNBENCH_ISA>() {
  static const quest::Kernels table{quest::ATTNBENCH_ISA::W, &quest::ATTNBENCH_ISA::widen,
                                     &quest::ATTNBENCH_ISA::bounds};
  return table;
}
}  // namespace attnbench::cpu
