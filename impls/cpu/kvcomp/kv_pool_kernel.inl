// The family's pooling stage (kv_stages.h), compiled once per ISA (runtime/isa.h).

#include "kv_stages.h"

#include <algorithm>
#include <cmath>

namespace attnbench::cpu::kv::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;

void pool_group(const float* raw, int64_t C, int64_t G, int64_t r, int32_t mode, int64_t row, float* scratch,
                float* score) {
  const bool is_max = mode == kvcomp::pool_max;
  // Padded copy of a head's scores: out-of-range elements are −inf (max) or 0 (avg), so shifted
  // vector loads cover every window; avg divides by the in-range count.
  float* padded = scratch;  // [r + C + r + W]
  float* count = padded + (C + 2 * r + W);
  const float pad = is_max ? -INFINITY : 0.0f;
  // avg divides by the in-range keys, avg_padded by the kernel (its padding counted as zeros).
  for (int64_t j = 0; j < C; ++j)
    count[j] = mode == kvcomp::pool_avg_padded ? static_cast<float>(2 * r + 1)
                                               : static_cast<float>(std::min(C - 1, j + r) - std::max<int64_t>(0, j - r) + 1);
  std::fill(score, score + C, 0.0f);
  std::fill(padded, padded + r, pad);
  std::fill(padded + r + C, padded + C + 2 * r + W, pad);
  for (int64_t hh = 0; hh < G; ++hh) {
    std::copy_n(raw + (row * G + hh) * C, C, padded + r);
    int64_t j = 0;
    for (; j + W <= C; j += W) {
      V acc = S::load(padded + j);
      for (int64_t o = 1; o <= 2 * r; ++o) acc = is_max ? S::max(acc, S::load(padded + j + o)) : S::add(acc, S::load(padded + j + o));
      if (!is_max) acc = S::div(acc, S::load(count + j));
      S::store(score + j, S::add(S::load(score + j), acc));
    }
    for (; j < C; ++j) {
      float acc = padded[j];
      for (int64_t o = 1; o <= 2 * r; ++o) acc = is_max ? std::max(acc, padded[j + o]) : acc + padded[j + o];
      if (!is_max) acc /= count[j];
      score[j] += acc;
    }
  }
  const float inv_g = 1.0f / static_cast<float>(G);
  for (int64_t j = 0; j < C; ++j) score[j] *= inv_g;
}

}  // namespace attnbench::cpu::kv::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const kv::PoolKernels& isa_kernels<kv::PoolKernels, Isa::ATTNBENCH_ISA>() {
  static const kv::PoolKernels table{&kv::ATTNBENCH_ISA::pool_group};
  return table;
}
}  // namespace attnbench::cpu
