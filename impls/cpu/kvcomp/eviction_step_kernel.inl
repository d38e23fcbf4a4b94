// The per-step eviction's scores, compiled once per ISA (runtime/isa.h). See eviction_step_kernel.h.

#include "eviction_step_kernel.h"

#include <cmath>

namespace attnbench::cpu::step::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
constexpr int W = S::W;

void slot_scores(const Problem& p, int64_t row, int64_t i0, int64_t i1) {
  const kvcomp::StepParams& s = p.s;
  alignas(64) float krow[kMaxHeadDim + 64];
  const int64_t n = s.slots, heads = kvcomp::step_heads_per_row(s), h0 = row * heads;
  const size_t key_bytes = static_cast<size_t>(s.head_dim) * dtype_size(p.dtype);
  const int64_t src = kvcomp::step_source_row(s, row), b = src / s.kv_heads;
  const float inv_heads = 1.0f / static_cast<float>(heads);
  for (int64_t i = i0; i < i1; ++i) {
    float a = 0.0f;
    // The row's heads by KV head: one widening of the key per KV head.
    for (int64_t bh = h0; bh < h0 + heads; bh += s.group) {
      const int64_t g = bh % s.q_heads / s.group;
      const char* key = static_cast<const char*>(p.k) + ((b * s.kv_heads + g) * n + i) * key_bytes;
      row_to_f32<S>(key, p.dtype, s.head_dim, p.dp, krow);
      for (int64_t h = bh; h < bh + s.group; ++h) {
        const float* q = p.q + h * p.dp;
        S::V acc = S::zero();
        for (int64_t x = 0; x < p.dp; x += W) acc = S::fma(S::load(q + x), S::load(krow + x), acc);
        a += std::exp(S::hsum(acc) - p.lse[h]);
      }
    }
    a *= inv_heads;
    const float score = (s.accumulate && i < n - 1 ? p.acc[src * (n - 1) + i] : 0.0f) + a;
    const int32_t pos = p.pos[src * n + i];
    const float key = s.visible_mean ? score / static_cast<float>(s.kv_len - pos) : score;
    p.keys[row * n + i] = kvcomp::step_candidate(s, pos) ? key : INFINITY;
    for (int64_t cr = src; cr < src + (s.shared_scores ? s.kv_heads : 1); ++cr) p.scores[cr * n + i] = score;
  }
}

}  // namespace attnbench::cpu::step::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const step::Kernels& isa_kernels<step::Kernels, Isa::ATTNBENCH_ISA>() {
  static const step::Kernels table{step::ATTNBENCH_ISA::W, &step::ATTNBENCH_ISA::slot_scores};
  return table;
}
}  // namespace attnbench::cpu
