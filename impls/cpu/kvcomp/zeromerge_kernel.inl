// ZeroMerge's decode steps, compiled once per ISA (runtime/isa.h). See zeromerge_kernel.h.

#include "zeromerge_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../attention/attention_reduce.h"
#include "../runtime/simd_rows.h"

namespace attnbench::cpu::zeromerge::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;

void row_steps(const Problem& p, int64_t r, float* scratch) {
  const kvcomp::ZeromergeParams& s = p.s;
  const int64_t d = s.head_dim, dp = p.dp, G = s.group, B = s.budget, M = s.dense, St = s.steps;
  const int64_t D = kvcomp::zm_mergeable_end(s), n_cap = B + 1;
  const int64_t n_pad = (n_cap + W - 1) / W * W;
  const size_t es = dtype_size(p.dtype), row_bytes = static_cast<size_t>(d) * es;
  const int64_t b = r / s.kv_heads, g = r % s.kv_heads;
  float* q = scratch;                  // [G][dp], scaled
  float* keys = q + G * dp;            // [W][dp]
  float* logit = keys + W * dp;        // [G][n_pad]: logits, then exp(logit − max)
  float* bias = logit + G * n_pad;     // [n_pad]
  float* a = bias + n_pad;             // [n_pad]: the step's attention per slot
  float* o = a + n_pad;                // [G][dp]
  float* ki = o + G * dp;              // [dp] x 3: merge operands
  float* kj = ki + dp;
  float* tmp = kj + dp;
  char* K = static_cast<char*>(p.k) + r * B * row_bytes;
  char* Vc = static_cast<char*>(p.v) + r * B * row_bytes;
  float* w = p.w + r * B;
  float* sc = p.score + r * B;
  const V scale = S::set1(s.scale);
  const float lam = s.lambda;
  for (int64_t t = 0; t < St; ++t) {
    const int64_t n = kvcomp::zm_fill(s, static_cast<int32_t>(t));  // slots; the new token is key n
    const char* k_new = static_cast<const char*>(p.k_new) + (r * St + t) * row_bytes;
    const char* v_new = static_cast<const char*>(p.v_new) + (r * St + t) * row_bytes;
    auto key_row = [&](int64_t i) -> const char* { return i < n ? K + i * row_bytes : k_new; };
    auto value_row = [&](int64_t i) -> const char* { return i < n ? Vc + i * row_bytes : v_new; };
    for (int64_t h = 0; h < G; ++h) {
      const int64_t qh = b * s.q_heads + g * G + h;
      float* qr = q + h * dp;
      row_to_f32<S>(static_cast<const char*>(p.q_new) + (qh * St + t) * row_bytes, p.dtype, d, dp, qr);
      for (int64_t x = 0; x < dp; x += W) S::store(qr + x, S::mul(S::load(qr + x), scale));
    }
    for (int64_t i = 0; i < n; ++i) bias[i] = w[i] == 1.0f ? 0.0f : lam * std::log(w[i]);
    bias[n] = 0.0f;
    // Logits, W slots at a time: each key widened once for the group's heads.
    for (int64_t i = 0; i <= n; i += W) {
      const int64_t nb = std::min<int64_t>(W, n + 1 - i);
      for (int64_t j = 0; j < W; ++j) row_to_f32<S>(key_row(i + std::min(j, nb - 1)), p.dtype, d, dp, keys + j * dp);
      for (int64_t h = 0; h < G; ++h) {
        alignas(64) float lv[W];
        S::store(lv, attn::keys_logits<S>(q + h * dp, keys, dp));
        for (int64_t j = 0; j < nb; ++j) logit[h * n_pad + i + j] = lv[j] + bias[i + j];
      }
    }
    // Softmax per head; the group's probabilities summed per slot.
    std::fill(a, a + n_pad, 0.0f);
    float inv_l[64];
    for (int64_t h = 0; h < G; ++h) {
      float* lr = logit + h * n_pad;
      float mx = -INFINITY;
      for (int64_t i = 0; i <= n; ++i) mx = std::max(mx, lr[i]);
      std::fill(lr + n + 1, lr + n_pad, -INFINITY);
      const V mv = S::set1(mx);
      V lsum = S::zero();
      for (int64_t i = 0; i < n_pad; i += W) {
        const V e = S::exp(S::sub(S::load(lr + i), mv));
        S::store(lr + i, e);
        lsum = S::add(lsum, e);
      }
      inv_l[h] = 1.0f / S::hsum(lsum);
      const V il = S::set1(inv_l[h]);
      for (int64_t i = 0; i < n_pad; i += W) S::store(a + i, S::fma(S::load(lr + i), il, S::load(a + i)));
    }
    // P·V: each value widened once for the group.
    std::fill(o, o + G * dp, 0.0f);
    for (int64_t i = 0; i <= n; ++i) {
      row_to_f32<S>(value_row(i), p.dtype, d, dp, tmp);
      for (int64_t h = 0; h < G; ++h) {
        const V e = S::set1(logit[h * n_pad + i]);
        float* oh = o + h * dp;
        for (int64_t x = 0; x < dp; x += W) S::store(oh + x, S::fma(e, S::load(tmp + x), S::load(oh + x)));
      }
    }
    for (int64_t h = 0; h < G; ++h) {
      const int64_t qh = b * s.q_heads + g * G + h;
      float* oh = o + h * dp;
      const V il = S::set1(inv_l[h]);
      for (int64_t x = 0; x < dp; x += W) S::store(oh + x, S::mul(S::load(oh + x), il));
      row_from_f32<S>(oh, d, p.dtype, static_cast<char*>(p.out) + (qh * St + t) * row_bytes);
    }
    // Scores decay and take the step's attention.
    for (int64_t i = 0; i < n; ++i) sc[i] = s.decay * sc[i] + a[i];
    int32_t* from = p.merged_from + r * St + t;
    int32_t* into = p.merged_into + r * St + t;
    if (n < B) {  // append
      std::memcpy(K + n * row_bytes, k_new, row_bytes);
      std::memcpy(Vc + n * row_bytes, v_new, row_bytes);
      w[n] = 1.0f;
      sc[n] = a[n];
      *from = *into = -1;
      continue;
    }
    const int64_t rho = kvcomp::zm_ring_slot(s, static_cast<int32_t>(t));
    int64_t i_star = M;
    for (int64_t i = M + 1; i < D; ++i)
      if (sc[i] < sc[i_star]) i_star = i;
    row_to_f32<S>(K + i_star * row_bytes, p.dtype, d, dp, ki);
    int64_t j_star = 0;
    float best = INFINITY;
    for (int64_t j = 0; j < M; ++j) {
      row_to_f32<S>(K + j * row_bytes, p.dtype, d, dp, kj);
      V acc = S::zero();
      for (int64_t x = 0; x < dp; x += W) {
        const V a1 = S::load(ki + x), b1 = S::load(kj + x);
        if (s.metric_l2) {
          const V df = S::sub(a1, b1);
          acc = S::fma(df, df, acc);
        } else {
          acc = S::fma(a1, b1, acc);
        }
      }
      const float m = s.metric_l2 ? S::hsum(acc) : -S::hsum(acc);
      if (m < best) best = m, j_star = j;
    }
    // Merge i* into j* (fp32, then the cache's dtype).
    const float wi = w[i_star], wj = w[j_star], wij = wi + wj;
    const V vwi = S::set1(wi), vwj = S::set1(wj);
    for (int pass = 0; pass < 2; ++pass) {
      char* base = pass == 0 ? K : Vc;
      row_to_f32<S>(base + i_star * row_bytes, p.dtype, d, dp, ki);
      row_to_f32<S>(base + j_star * row_bytes, p.dtype, d, dp, kj);
      const V vw = S::set1(wij);
      for (int64_t x = 0; x < dp; x += W)
        S::store(tmp + x, S::div(S::fma(vwi, S::load(ki + x), S::mul(vwj, S::load(kj + x))), vw));
      row_from_f32<S>(tmp, d, p.dtype, base + j_star * row_bytes);
      // The departing ring token into i*, the new token into the ring slot.
      std::memcpy(base + i_star * row_bytes, base + rho * row_bytes, row_bytes);
      std::memcpy(base + rho * row_bytes, pass == 0 ? k_new : v_new, row_bytes);
    }
    w[j_star] = wij;
    sc[j_star] = s.score_sum ? sc[i_star] + sc[j_star] : std::max(sc[i_star], sc[j_star]);
    w[i_star] = w[rho];
    sc[i_star] = sc[rho];
    w[rho] = 1.0f;
    sc[rho] = a[B];
    *from = static_cast<int32_t>(i_star);
    *into = static_cast<int32_t>(j_star);
  }
}

}  // namespace attnbench::cpu::zeromerge::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const zeromerge::Kernels& isa_kernels<zeromerge::Kernels, Isa::ATTNBENCH_ISA>() {
  static const zeromerge::Kernels table{zeromerge::ATTNBENCH_ISA::W, &zeromerge::ATTNBENCH_ISA::row_steps};
  return table;
}
}  // namespace attnbench::cpu
