// The per-step eviction's scores, compiled once per ISA (runtime/isa.h). See eviction_step_kernel.h.
// Slots go W at a time: their keys are widened to fp32 once per KV head, each query head's W
// logits are one vector (4 slots' dot products folded by attention_reduce.h's sum4 and fold, as
// the decode kernel's), and exp(logit − lse) is one vector exp, so no slot pays a horizontal sum
// or a scalar exp of its own.

#include "eviction_step_kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "../attention/attention_reduce.h"

namespace attnbench::cpu::step::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;
constexpr size_t kPrefetchBytes = 64 << 10;

void widen_queries(const void* q, DType dtype, int64_t rows, int64_t d, int64_t dp, float scale, float* out) {
  const size_t row_bytes = static_cast<size_t>(d) * dtype_size(dtype);
  const V sv = S::set1(scale);
  for (int64_t r = 0; r < rows; ++r) {
    float* dst = out + r * dp;
    row_to_f32<S>(static_cast<const char*>(q) + r * row_bytes, dtype, d, dp, dst);
    for (int64_t x = 0; x < dp; x += W) S::store(dst + x, S::mul(S::load(dst + x), sv));
  }
}

void slot_scores(const Problem& p, int64_t row, int64_t i0, int64_t i1) {
  const kvcomp::StepParams& s = p.s;
  alignas(64) float keys[W * (kMaxHeadDim + 16)];
  alignas(64) float a[W], e[W];
  const int64_t n = s.slots, heads = kvcomp::step_heads_per_row(s), h0 = row * heads;
  const size_t key_bytes = static_cast<size_t>(s.head_dim) * dtype_size(p.dtype);
  const int64_t src = kvcomp::step_source_row(s, row), b = src / s.kv_heads;
  const V inv_heads = S::set1(1.0f / static_cast<float>(heads));
  for (int64_t i = i0; i < i1; i += W) {
    const int64_t nb = std::min<int64_t>(W, i1 - i);
    V sum = S::zero();
    // The row's heads by KV head: each key widened once per KV head.
    for (int64_t bh = h0; bh < h0 + heads; bh += s.group) {
      const int64_t g = bh % s.q_heads / s.group;
      const char* first = static_cast<const char*>(p.k) + ((b * s.kv_heads + g) * n + i) * key_bytes;
      // The hardware prefetcher alone keeps too few lines in flight between the arithmetic (the
      // decode kernel measured 26% of a plain read's bandwidth without): fetch 64 KiB ahead.
      for (size_t off = 0; off < static_cast<size_t>(nb) * key_bytes; off += 64)
        _mm_prefetch(first + kPrefetchBytes + off, _MM_HINT_T1);
      for (int64_t j = 0; j < W; ++j)  // past the block's end: its last key again (never stored)
        row_to_f32<S>(first + std::min(j, nb - 1) * key_bytes, p.dtype, s.head_dim, p.dp, keys + j * p.dp);
      for (int64_t h = bh; h < bh + s.group; ++h)
        sum = S::add(sum, S::exp(S::sub(attn::keys_logits<S>(p.q + h * p.dp, keys, p.dp), S::set1(p.lse[h]))));
    }
    S::store(a, S::mul(sum, inv_heads));
    for (int64_t j = 0; j < nb; ++j) {
      const int64_t slot = i + j;
      const float score = (s.accumulate && slot < n - 1 ? p.acc[src * (n - 1) + slot] : 0.0f) + a[j];
      const int32_t pos = p.pos[src * n + slot];
      e[j] = s.visible_mean ? score / static_cast<float>(s.kv_len - pos) : score;
      p.keys[row * n + slot] = kvcomp::step_candidate(s, pos) ? e[j] : INFINITY;
      for (int64_t cr = src; cr < src + (s.shared_scores ? s.kv_heads : 1); ++cr) p.scores[cr * n + slot] = score;
    }
  }
}

}  // namespace attnbench::cpu::step::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const step::Kernels& isa_kernels<step::Kernels, Isa::ATTNBENCH_ISA>() {
  static const step::Kernels table{step::ATTNBENCH_ISA::W, &step::ATTNBENCH_ISA::widen_queries,
                                   &step::ATTNBENCH_ISA::slot_scores};
  return table;
}
}  // namespace attnbench::cpu
