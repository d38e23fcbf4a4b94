// knorm's score kernel (semantics: reference/kvcomp/knorm.cpp), compiled once per ISA
// (runtime/isa.h): score_j = −√(Σ_x k_{j,x}²) in fp32, the key widened to fp32 in registers.

#include "knorm_kernel.h"

#include <cmath>

namespace attnbench::cpu::knorm::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
constexpr int W = S::W;

void scores(const void* k, DType dtype, int64_t keys, int64_t d, float* out) {
  alignas(64) float row[kMaxHeadDim + 64];
  const size_t bytes = static_cast<size_t>(d) * dtype_size(dtype);
  const int64_t dp = (d + W - 1) / W * W;
  for (int64_t j = 0; j < keys; ++j) {
    row_to_f32<S>(static_cast<const char*>(k) + j * bytes, dtype, d, dp, row);
    S::V acc = S::zero();
    for (int64_t x = 0; x < dp; x += W) acc = S::fma(S::load(row + x), S::load(row + x), acc);
    out[j] = -std::sqrt(S::hsum(acc));
  }
}

}  // namespace attnbench::cpu::knorm::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const knorm::Kernels& isa_kernels<knorm::Kernels, Isa::ATTNBENCH_ISA>() {
  static const knorm::Kernels table{&knorm::ATTNBENCH_ISA::scores};
  return table;
}
}  // namespace attnbench::cpu
