// What both CPU attention kernels share (included by attention_kernel.inl, once per ISA, inside its
// namespace): storage rows to and from fp32, the query rows a task packs, and how a task's rows
// are finished (normalised into O/LSE, or left as a flash-decoding partial).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "../runtime/simd_rows.h"
#include "../runtime/tiles.h"
#include "attention_reduce.h"

namespace attnbench::cpu::attn::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;

inline const char* row_ptr(const void* base, DType t, int64_t elem) {
  return static_cast<const char*>(base) + elem * static_cast<int64_t>(dtype_size(t));
}

// The packed row r = i·G + hh of a task's position p (p itself without head_sparse).
inline int64_t task_row(const Problem& P, int64_t b, int64_t g, int64_t p) {
  return attention::packed_row(P.s, P.row_map, b, g, p);
}
// Index of the row at position p of group g in the [batch, q_heads, q_len] row space of Q, O and LSE.
inline int64_t query_row(const Problem& P, int64_t b, int64_t g, int64_t p) {
  const int64_t G = P.s.group, r = task_row(P, b, g, p), h = g * G + r % G, i = r / G;
  return (b * P.s.q_heads + h) * P.s.q_len + i;
}

#include "rope_rotate.inl"

// The fused rope (attention_common.h): the first rope_dim dims of the fp32 row x rotated in place
// with its coefficient row c, as rope's own kernel rotates (rope_rotate.inl).
inline void rotate_row(const Problem& P, const float* c, float* x) {
  alignas(64) float in[1024];  // the schema's head_dim bound
  std::memcpy(in, x, P.s.rope_dim * sizeof(float));
  rotate_f32(P.rope, c, c + P.s.rope_dim, in, x);
}

// scale·Q of rows [r0, r0 + nr) as fp32 rows of dp (zero-padded), rotated first with the fused rope.
inline void pack_queries(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t nr, float* q) {
  const int64_t d = P.s.head_dim, dp = P.dp;
  for (int64_t rr = 0; rr < nr; ++rr) {
    float* row = q + rr * dp;
    row_to_f32<S>(row_ptr(P.q, P.dtype, query_row(P, b, g, r0 + rr) * d), P.dtype, d, dp, row);
    if (P.q_rope) rotate_row(P, P.q_rope + (b * P.s.q_len + task_row(P, b, g, r0 + rr) / P.s.group) * 2 * P.s.rope_dim, row);
    for (int64_t x = 0; x < dp; x += W) S::store(row + x, S::mul(S::load(row + x), S::set1(P.scale)));
  }
}

// The keys each row of a task sees within the task's range [j0, j1), clipped to it:
// [j0, sink[rr]) ∪ [lo[rr], hi[rr]) (attention_common.h: the sinks, then the window), with
// sink ≤ lo ≤ hi; and what the logits need per row (ALiBi's slope and the query's position).
template <int N>
struct Spans {
  int64_t sink[N], lo[N], hi[N];
  int64_t sink_max = 0, lo_min = 0, hi_max = 0;  // over the rows: the blocks worth visiting
  float slope[N], pos[N];
  int64_t b = 0, g = 0, key_end = 0;  // the group, and the end of its keys (key_bias reads below it)
  const int32_t* tree[N];             // with tree_mask: each row's mask row
  int64_t tree_begin = 0;             // the group's first tree key (len − q_len)
};

template <int N>
inline void visible_spans(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t nr, int64_t j0, int64_t j1,
                          Spans<N>& sp) {
  const auto& s = P.s;
  const int64_t kv_len = P.kv_len[attention::kv_len_index(s, b, g)], G = s.group;
  j1 = std::min(j1, kv_len);
  sp.b = b;
  sp.g = g;
  sp.key_end = j1;
  sp.sink_max = j0;
  sp.lo_min = j1;
  sp.hi_max = j0;
  for (int64_t rr = 0; rr < nr; ++rr) {
    const int64_t r = task_row(P, b, g, r0 + rr), i = r / G, end = attention::visible_end(s, kv_len, i);
    const int64_t begin = attention::window_begin(s, end);
    sp.hi[rr] = std::max(j0, std::min(j1, end));
    sp.lo[rr] = std::min(sp.hi[rr], std::max(j0, begin));
    sp.sink[rr] = std::min(sp.lo[rr], std::max(j0, attention::sink_end(s, begin)));
    sp.sink_max = std::max(sp.sink_max, sp.sink[rr]);
    sp.lo_min = std::min(sp.lo_min, sp.lo[rr]);
    sp.hi_max = std::max(sp.hi_max, sp.hi[rr]);
    sp.slope[rr] = s.alibi ? P.alibi_slopes[g * G + r % G] : 0.0f;
    sp.pos[rr] = static_cast<float>(kv_len - s.q_len + i);
    if (s.tree_mask) sp.tree[rr] = attention::tree_row(s, P.tree_mask, b, i);
  }
  sp.tree_begin = kv_len - s.q_len;
  if (sp.lo_min < sp.sink_max) sp.lo_min = sp.sink_max;  // no gap between sinks and windows
}

// f(jb, bc) over blocks of at most `block` keys covering every key some row sees, from j0: the
// sink blocks, then the window blocks, the gap between them skipped (a window's work counts only
// the keys it sees). A block starting in the gap starts at the window's first key, rounded down
// to `align` (the AMX kernel's packed blocks).
template <int N, typename F>
inline void for_visible_blocks(const Spans<N>& sp, int64_t j0, int64_t block, int64_t align, F&& f) {
  for (int64_t jb = j0; jb < sp.hi_max;) {
    if (jb >= sp.sink_max && jb < sp.lo_min) jb = std::max(jb, sp.lo_min / align * align);
    const int64_t bc = std::min(block, sp.hi_max - jb);
    f(jb, bc);
    jb += bc;
  }
}

// Keys [jb, jb + bc) of row rr: its visible ones are t < a and lo_t ≤ t < hi_t (block offsets).
struct BlockMask {
  int64_t a, lo_t, hi_t;
  int64_t visible() const { return a + (hi_t - lo_t); }
};
template <int N>
inline BlockMask block_mask(const Spans<N>& sp, int64_t rr, int64_t jb, int64_t bc) {
  const auto at = [&](int64_t j) { return std::clamp<int64_t>(j - jb, 0, bc); };
  return {at(sp.sink[rr]), at(sp.lo[rr]), at(sp.hi[rr])};
}
// Masked keys of a row's scores set to −inf, through the padded width n.
inline void apply_mask(const BlockMask& m, float* row, int64_t n) {
  for (int64_t t = m.a; t < m.lo_t; ++t) row[t] = -INFINITY;
  for (int64_t t = m.hi_t; t < n; ++t) row[t] = -INFINITY;
}

// With tree_mask: row rr's tree keys in [jb, jb + bc) that are not its ancestors set to −inf (the
// keys past its causal end are already; attention_common.h tree_visible).
template <int N>
inline void apply_tree_mask(const Problem& P, const Spans<N>& sp, int64_t rr, int64_t jb, int64_t bc, float* row) {
  const int64_t t0 = std::max<int64_t>(0, sp.tree_begin - jb), t1 = std::min(bc, sp.hi[rr] - jb);
  const int64_t len = sp.tree_begin + P.s.q_len;
  for (int64_t t = t0; t < t1; ++t)
    if (!attention::tree_visible(P.s, sp.tree[rr], len, jb + t)) row[t] = -INFINITY;
}

// Cog's signed weights (attention_common.h): the row's n scores replaced by their magnitudes and
// their signs (−1, 0, +1) kept in sg, before the mask; the probabilities take the signs back after
// the softmax (which sums the magnitudes' exponentials). n a multiple of W.
inline void split_signs(float* row, float* sg, int64_t n) {
  for (int64_t t = 0; t < n; ++t) {
    const float s = row[t];
    sg[t] = static_cast<float>((s > 0.0f) - (s < 0.0f));
    row[t] = std::fabs(s);
  }
}
inline void apply_signs(float* row, const float* sg, int64_t n) {
  for (int64_t t = 0; t < n; t += W) S::store(row + t, S::mul(S::load(row + t), S::load(sg + t)));
}

// tanh in fp32 to within 5 ulp: the odd rational x·p(x²)/q(x²) of degrees 13 and 6 on x clamped
// to ±7.9053 (where it reaches 1 in fp32), the approximation Eigen's fast tanh uses. No compare or
// blend, so it is the same code at every width.
inline V tanh_v(V x) {
  const float c = 7.90531110763549805f;
  x = S::max(S::set1(-c), S::sub(S::zero(), S::max(S::set1(-c), S::sub(S::zero(), x))));
  const V x2 = S::mul(x, x);
  V p = S::set1(-2.76076847742355e-16f);
  p = S::fma(p, x2, S::set1(2.00018790482477e-13f));
  p = S::fma(p, x2, S::set1(-8.60467152213735e-11f));
  p = S::fma(p, x2, S::set1(5.12229709037114e-08f));
  p = S::fma(p, x2, S::set1(1.48572235717979e-05f));
  p = S::fma(p, x2, S::set1(6.37261928875436e-04f));
  p = S::fma(p, x2, S::set1(4.89352455891786e-03f));
  p = S::mul(p, x);
  V q = S::set1(1.19825839466702e-06f);
  q = S::fma(q, x2, S::set1(1.18534705686654e-04f));
  q = S::fma(q, x2, S::set1(2.26843463243900e-03f));
  q = S::fma(q, x2, S::set1(4.89352518554385e-03f));
  return S::div(p, q);
}

// The logit modifiers (attention_common.h) on n scores of row rr for keys jb, jb + 1, ...: the
// soft-cap, then ALiBi's bias slope·(j − position), then key_bias of each key below the group's
// end (the masked ones past it keep theirs). n a multiple of W.
template <int N>
inline void modify_logits(const Problem& P, const Spans<N>& sp, int64_t rr, int64_t jb, float* row, int64_t n) {
  const float cap = P.s.softcap;
  if (cap > 0) {
    const V c = S::set1(cap), inv = S::set1(1.0f / cap);
    for (int64_t t = 0; t < n; t += W) S::store(row + t, S::mul(c, tanh_v(S::mul(S::load(row + t), inv))));
  }
  if (P.s.alibi) {
    alignas(64) float offs[W];
    for (int t = 0; t < W; ++t) offs[t] = static_cast<float>(t);
    const V slope = S::set1(sp.slope[rr]), lanes = S::load(offs);
    for (int64_t t = 0; t < n; t += W) {
      const V dist = S::add(S::set1(static_cast<float>(jb + t) - sp.pos[rr]), lanes);  // exact below 2^24
      S::store(row + t, S::fma(slope, dist, S::load(row + t)));
    }
  }
  if (P.s.key_bias) {
    const int64_t n_keys = std::min(n, sp.key_end - jb);
    for (int64_t t = 0; t < n_keys; ++t) row[t] += P.key_bias[attention::key_row(P.s, P.key_idx, sp.b, sp.g, jb + t)];
  }
}

// Row rr's unnormalised o (dvp floats, overwritten), running max m and sum l: into the partial
// outputs, or normalised (and gated) into O and LSE.
inline void finish_row(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t rr, float m, float l, float* o,
                       const PartialOut* partial) {
  const int64_t dp = P.dvp, d = P.s.v_head_dim;
  if (partial) {
    partial->m[rr] = m;
    partial->l[rr] = l;
    std::memcpy(partial->o + rr * dp, o, dp * sizeof(float));
    return;
  }
  const int64_t row = query_row(P, b, g, r0 + rr);
  if (l == 0.0f) {  // no visible key
    std::fill(o, o + dp, 0.0f);
    P.lse[row] = -INFINITY;
  } else {  // head_sparse scales O by the row's gate (exactly 1/l when the gate is 1)
    const V inv = S::set1(P.s.head_sparse ? P.row_gates[row] / l : 1.0f / l);
    for (int64_t x = 0; x < dp; x += W) S::store(o + x, S::mul(S::load(o + x), inv));
    P.lse[row] = m + std::log(l);
  }
  row_from_f32<S>(o, d, P.dtype, static_cast<char*>(P.o) + row * d * static_cast<int64_t>(dtype_size(P.dtype)));
}

}  // namespace attnbench::cpu::attn::ATTNBENCH_ISA
