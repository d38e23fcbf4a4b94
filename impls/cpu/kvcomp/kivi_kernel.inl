// kivi_decode's kernel (semantics: reference/kvcomp/kivi_decode.cpp; layout: kivi_common.h),
// compiled once per ISA (runtime/isa.h). A task is the group's query rows over a range of tokens,
// a block of whole groups at a time, with an online softmax across blocks:
//   quantized keys  channel-major codes: for a register tile of rows × token vectors, every channel
//                   c adds a_r[c]·codes, a_r[c] = scale·q_r[c]·kscale[c, g] formed once per group
//                   (and broadcast from memory in the loop), the codes widened from their
//                   words in registers (S::codes); the minima add Σ_c q_r[c]·kmin[c, g], once per
//                   group and row. Each channel's codes are their own stream, more than the
//                   hardware prefetcher follows, so the kernel prefetches each channel's line ahead.
//   full keys       the window's rows, dot products.
//   values          P·(code·scale + min) = (P·scale)·code + P·min: the scales folded into each
//                   row's probabilities once per block, so a vector of codes is widened once and
//                   multiplied into every row, and the minima add Σ_j p_j·min_j per group; the
//                   full-precision window's rows as the attention kernels do them.
// Everything is fp32; the codes are exact as floats.

#include "kivi_kernel.h"

#include <algorithm>
#include <cmath>
#include <immintrin.h>

#include "../runtime/elements.h"
#include "../runtime/simd_rows.h"
#include "../runtime/tiles.h"

namespace attnbench::cpu::kivi::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;
constexpr int kRows = W == 16 ? 4 : 2;  // rows of a register tile
constexpr int kVecs = 4;                // token or dim vectors of a register tile
constexpr int64_t kAheadTokens = 1024;  // how far ahead each channel's key codes are prefetched

// Every line of [p, p + bytes) asked for: the value codes, scales and minima of a later block, whose
// streams the hardware prefetcher loses among the key channels' many.
inline void prefetch_lines(const void* p, int64_t bytes) {
  for (int64_t x = 0; x < bytes; x += 64) _mm_prefetch(static_cast<const char*>(p) + x, _MM_HINT_T0);
}

inline float dot(const float* a, const float* b, int64_t n) {
  V acc = S::zero();
  for (int64_t x = 0; x < n; x += W) acc = S::fma(S::load(a + x), S::load(b + x), acc);
  return S::hsum(acc);
}

struct Scratch {
  float *q, *s, *v, *ksc, *kmn, *mt, *aq, *vsc, *vmn, *ps;
};

// Scores of NR rows × NV vectors of quantized keys from token `tok` (all in group gi of the block):
// Σ_c a_r[c]·code[c][t] + mt[r], into s[r][at + v·W].
template <int BITS, int NR, int NV>
inline void key_tile(const Problem& P, const Scratch& sc, int64_t bh, int64_t r0, int64_t gi, int64_t tok, int64_t at, int64_t kb) {
  const auto& s = P.s;
  const int64_t D = s.head_dim, words_per_row = kvcomp::kivi_k_words(s);
  const uint32_t* codes = P.k_codes + bh * D * words_per_row;
  const bool line_start = r0 == 0 && tok % (16 * s.per_word) == 0;
  V acc[NR][NV];
  for (int r = 0; r < NR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = S::zero();
  for (int64_t c = 0; c < D; ++c) {
    const uint32_t* words = codes + c * words_per_row;
    if (line_start) _mm_prefetch(reinterpret_cast<const char*>(words + (tok + kAheadTokens) / s.per_word), _MM_HINT_T0);
    V a[NR];  // broadcast from memory: no shuffle-port work per channel
    for (int r = 0; r < NR; ++r) a[r] = S::set1(sc.aq[(r0 + r) * D + c]);
    for (int v = 0; v < NV; ++v) {
      const V cv = S::template codes<BITS>(words, tok + v * W);
      for (int r = 0; r < NR; ++r) acc[r][v] = S::fma(a[r], cv, acc[r][v]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    const V m = S::set1(sc.mt[(r0 + r) * (kb / s.group_size) + gi]);
    for (int v = 0; v < NV; ++v) S::store(sc.s + (r0 + r) * kb + at + v * W, S::add(acc[r][v], m));
  }
}

// Scores of every row for the block's tokens [tb, te) into sc.s (−inf through the last vector).
template <int BITS>
inline void block_scores(const Problem& P, const Scratch& sc, int64_t bh, int64_t len, int64_t tb, int64_t te, int64_t kb) {
  const auto& s = P.s;
  const int64_t D = s.head_dim, G = s.group_size, rows = s.group, R = s.residual, kq = kvcomp::kivi_k_quant(s, len);
  const int64_t qe = std::min(te, kq), es = static_cast<int64_t>(dtype_size(P.dtype));
  if (tb < qe) {  // whole groups [tb, qe)
    const int64_t ng = (qe - tb) / G, g0 = tb / G, groups_per_row = kvcomp::kivi_k_groups(s);
    // Each channel's scales and minima are a stream of their own too: the next line (32 groups)
    // asked for when a block enters a line; gathered across the channels, a vector at a time.
    const int64_t per_line = 64 / es;
    const auto* kscale = static_cast<const uint16_t*>(P.k_scale) + bh * D * groups_per_row;
    const auto* kmin = static_cast<const uint16_t*>(P.k_min) + bh * D * groups_per_row;
    if (g0 % per_line < ng)
      for (int64_t c = 0; c < D; ++c) {
        _mm_prefetch(reinterpret_cast<const char*>(kscale + c * groups_per_row + g0 + per_line), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(kmin + c * groups_per_row + g0 + per_line), _MM_HINT_T0);
      }
    const bool f16 = P.dtype == DType::f16;
    for (int64_t gi = 0; gi < ng; gi += 2)  // two groups a gather where the block has them
      for (int64_t c = 0; c < D; c += W) {
        const int64_t at = c * groups_per_row + g0 + gi;
        if (gi + 1 < ng) {
          V a, b;
          S::load_half_pairs_strided(kscale + at, groups_per_row, f16, a, b);
          S::store(sc.ksc + gi * D + c, a);
          S::store(sc.ksc + (gi + 1) * D + c, b);
          S::load_half_pairs_strided(kmin + at, groups_per_row, f16, a, b);
          S::store(sc.kmn + gi * D + c, a);
          S::store(sc.kmn + (gi + 1) * D + c, b);
        } else {
          S::store(sc.ksc + gi * D + c, S::load_half_strided(kscale + at, groups_per_row, f16));
          S::store(sc.kmn + gi * D + c, S::load_half_strided(kmin + at, groups_per_row, f16));
        }
      }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t gi = 0; gi < ng; ++gi) sc.mt[r * (kb / G) + gi] = dot(sc.q + r * D, sc.kmn + gi * D, D);
    for (int64_t gi = 0; gi < ng; ++gi) {
      for (int64_t r = 0; r < rows; ++r)  // a_r[c] = scale·q_r[c]·kscale[c, g]
        for (int64_t x = 0; x < D; x += W)
          S::store(sc.aq + r * D + x, S::mul(S::load(sc.q + r * D + x), S::load(sc.ksc + gi * D + x)));
      for_tiles<kVecs>(G / W, [&](int64_t v0, auto nv) {
        for_tiles<kRows>(rows, [&](int64_t r0, auto nr) {
          key_tile<BITS, decltype(nr)::value, decltype(nv)::value>(P, sc, bh, r0, gi, tb + gi * G + v0 * W, gi * G + v0 * W, kb);
        });
      });
    }
  }
  for (int64_t t = std::max(tb, kq); t < te; ++t) {  // the full-precision window
    float* krow = sc.v;                             // the value tile is free until the softmax
    row_to_f32<S>(static_cast<const char*>(P.k_full) + ((bh * R + t - kq) * D) * es, P.dtype, D, D, krow);
    for (int64_t r = 0; r < rows; ++r) sc.s[r * kb + t - tb] = dot(sc.q + r * D, krow, D);
  }
  const int64_t n = te - tb, padded = (n + W - 1) / W * W;
  for (int64_t r = 0; r < rows; ++r) std::fill(sc.s + r * kb + n, sc.s + r * kb + padded, -INFINITY);
}

// o[r] += Σ_j p[r][j]·v[j] over the full-precision value rows j ∈ [j0, j1) of the block (fp32 in
// sc.v from row 0), for NR rows and NV dim vectors from dim x0.
template <int NR, int NV>
inline void pv_full(const Scratch& sc, float* o, int64_t r0, int64_t x0, int64_t j0, int64_t j1, int64_t D, int64_t kb) {
  V acc[NR][NV];
  for (int r = 0; r < NR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = S::load(o + (r0 + r) * D + x0 + v * W);
  for (int64_t j = j0; j < j1; ++j) {
    V vv[NV];
    for (int v = 0; v < NV; ++v) vv[v] = S::load(sc.v + (j - j0) * D + x0 + v * W);
    for (int r = 0; r < NR; ++r) {
      const V p = S::set1(sc.s[(r0 + r) * kb + j]);
      for (int v = 0; v < NV; ++v) acc[r][v] = S::fma(p, vv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int v = 0; v < NV; ++v) S::store(o + (r0 + r) * D + x0 + v * W, acc[r][v]);
}

// o[r] += Σ_j ps[r][g][j]·codes[j] over the quantized value rows j ∈ [0, n) of the block, for NR
// rows and NV dim vectors from dim x0, all in channel group g: the scales are folded into P
// (ps = p·vscale), so a code vector is widened once and multiplied into every row, and a row's
// coefficients are one broadcast load per token.
template <int BITS, int NR, int NV>
inline void pv_codes(const Problem& P, const Scratch& sc, float* o, int64_t tok0, int64_t r0, int64_t g, int64_t x0, int64_t n,
                     int64_t kb) {
  const auto& s = P.s;
  const int64_t D = s.head_dim, groups = kvcomp::kivi_v_groups(s), words_per_row = kvcomp::kivi_v_words(s);
  V acc[NR][NV];
  for (int r = 0; r < NR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = S::load(o + (r0 + r) * D + x0 + v * W);
  const float* ps[NR];
  for (int r = 0; r < NR; ++r) ps[r] = sc.ps + ((r0 + r) * groups + g) * kb;
  const uint32_t* words = P.v_codes + tok0 * words_per_row;
  for (int64_t j = 0; j < n; ++j, words += words_per_row) {
    V cv[NV];
    for (int v = 0; v < NV; ++v) cv[v] = S::template codes<BITS>(words, x0 + v * W);
    for (int r = 0; r < NR; ++r) {
      const V p = S::set1(ps[r][j]);
      for (int v = 0; v < NV; ++v) acc[r][v] = S::fma(p, cv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int v = 0; v < NV; ++v) S::store(o + (r0 + r) * D + x0 + v * W, acc[r][v]);
}

// o[r] += P·V over the block's tokens [tb, te), P in sc.s.
template <int BITS>
inline void block_values(const Problem& P, const Scratch& sc, float* o, int64_t bh, int64_t len, int64_t tb, int64_t te, int64_t kb) {
  const auto& s = P.s;
  const int64_t D = s.head_dim, G = s.group_size, rows = s.group, vq = kvcomp::kivi_v_quant(s, len);
  const int64_t es = static_cast<int64_t>(dtype_size(P.dtype)), groups = kvcomp::kivi_v_groups(s);
  const int64_t qe = std::min(te, vq);
  if (tb < qe) {  // quantized rows: P·(code·scale + min) = (P·scale)·code + P·min
    const int64_t n = qe - tb, tok0 = bh * s.v_quant_cap + tb, nv = (n + W - 1) / W;
    const int64_t ahead = std::min<int64_t>(kb, std::max<int64_t>(0, vq - tb - 2 * kb));  // tokens two blocks on
    if (ahead > 0) {
      prefetch_lines(P.v_codes + (tok0 + 2 * kb) * kvcomp::kivi_v_words(s), ahead * kvcomp::kivi_v_words(s) * 4);
      prefetch_lines(static_cast<const char*>(P.v_scale) + (tok0 + 2 * kb) * groups * es, ahead * groups * es);
      prefetch_lines(static_cast<const char*>(P.v_min) + (tok0 + 2 * kb) * groups * es, ahead * groups * es);
    }
    if (groups <= 4) {  // each token's scales and minima, a run per channel group (zeros past n; P is 0 there already)
      const bool f16 = P.dtype == DType::f16;
      S::halves_by_group(static_cast<const uint16_t*>(P.v_scale) + tok0 * groups, n, groups, f16, sc.vsc, kb);
      S::halves_by_group(static_cast<const uint16_t*>(P.v_min) + tok0 * groups, n, groups, f16, sc.vmn, kb);
    } else {
      for (int64_t j = 0; j < nv * W; ++j)
        for (int64_t g = 0; g < groups; ++g) {
          sc.vsc[g * kb + j] = j < n ? element_f32(P.v_scale, P.dtype, (tok0 + j) * groups + g) : 0.0f;
          sc.vmn[g * kb + j] = j < n ? element_f32(P.v_min, P.dtype, (tok0 + j) * groups + g) : 0.0f;
        }
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t g = 0; g < groups; ++g) {
        const float* p = sc.s + r * kb;
        float* ps = sc.ps + (r * groups + g) * kb;
        V pm = S::zero();
        for (int64_t x = 0; x < nv * W; x += W) {
          S::store(ps + x, S::mul(S::load(p + x), S::load(sc.vsc + g * kb + x)));
          pm = S::fma(S::load(p + x), S::load(sc.vmn + g * kb + x), pm);
        }
        const V add = S::set1(S::hsum(pm));
        for (int64_t x = g * G; x < (g + 1) * G; x += W) S::store(o + r * D + x, S::add(S::load(o + r * D + x), add));
      }
    for (int64_t g = 0; g < groups; ++g)
      for_tiles<kVecs>(G / W, [&](int64_t v0, auto nvec) {
        for_tiles<kRows>(rows, [&](int64_t r0, auto nr) {
          pv_codes<BITS, decltype(nr)::value, decltype(nvec)::value>(P, sc, o, tok0, r0, g, g * G + v0 * W, n, kb);
        });
      });
  }
  const int64_t fb = std::max(tb, vq);
  if (fb < te) {  // the full-precision window's rows
    for (int64_t t = fb; t < te; ++t)
      row_to_f32<S>(static_cast<const char*>(P.v_full) + ((bh * (s.residual + 1) + t - vq) * D) * es, P.dtype, D, D, sc.v + (t - fb) * D);
    for_tiles<kVecs>(D / W, [&](int64_t v0, auto nvec) {
      for_tiles<kRows>(rows, [&](int64_t r0, auto nr) {
        pv_full<decltype(nr)::value, decltype(nvec)::value>(sc, o, r0, v0 * W, fb - tb, te - tb, D, kb);
      });
    });
  }
}

template <int BITS>
void attend_bits(const Problem& P, int64_t b, int64_t h, int64_t t0, int64_t t1, float* scratch, float* m, float* l, float* o) {
  const auto& s = P.s;
  const int64_t D = s.head_dim, rows = s.group, kb = block_tokens(s), bh = b * s.kv_heads + h;
  const int64_t len = P.kv_len[b];
  t1 = std::min(t1, len);
  Scratch sc;
  sc.q = scratch;
  sc.s = sc.q + rows * D;
  sc.v = sc.s + rows * kb;
  sc.ksc = sc.v + kb * D;
  sc.kmn = sc.ksc + D * (kb / s.group_size);
  sc.mt = sc.kmn + D * (kb / s.group_size);
  sc.aq = sc.mt + rows * (kb / s.group_size);
  const int64_t v_groups = kvcomp::kivi_v_groups(s);
  sc.vsc = sc.aq + rows * D;
  sc.vmn = sc.vsc + v_groups * kb;
  sc.ps = sc.vmn + v_groups * kb;
  const int64_t es = static_cast<int64_t>(dtype_size(P.dtype));
  for (int64_t r = 0; r < rows; ++r) {  // scale·q
    float* q = sc.q + r * D;
    row_to_f32<S>(static_cast<const char*>(P.q) + ((b * s.q_heads + h * rows + r) * D) * es, P.dtype, D, D, q);
    for (int64_t x = 0; x < D; x += W) S::store(q + x, S::mul(S::load(q + x), S::set1(s.scale)));
  }
  std::fill(m, m + rows, -INFINITY);
  std::fill(l, l + rows, 0.0f);
  std::fill(o, o + rows * D, 0.0f);
  for (int64_t tb = t0; tb < t1; tb += kb) {
    const int64_t te = std::min(tb + kb, t1), n = te - tb, nv = (n + W - 1) / W;
    block_scores<BITS>(P, sc, bh, len, tb, te, kb);
    for (int64_t r = 0; r < rows; ++r) {  // online softmax: P overwrites the scores
      float* row = sc.s + r * kb;
      V mv = S::load(row);
      for (int64_t x = 1; x < nv; ++x) mv = S::max(mv, S::load(row + x * W));
      const float m_new = std::max(m[r], S::hmax(mv));
      const float alpha = std::exp(m[r] - m_new);  // 0 when m was −inf
      V sum = S::zero();
      for (int64_t x = 0; x < nv; ++x) {
        const V e = S::exp(S::sub(S::load(row + x * W), S::set1(m_new)));
        S::store(row + x * W, e);
        sum = S::add(sum, e);
      }
      l[r] = l[r] * alpha + S::hsum(sum);
      m[r] = m_new;
      if (alpha != 1.0f)
        for (int64_t x = 0; x < D; x += W) S::store(o + r * D + x, S::mul(S::load(o + r * D + x), S::set1(alpha)));
    }
    block_values<BITS>(P, sc, o, bh, len, tb, te, kb);
  }
}

void attend(const Problem& P, int64_t b, int64_t h, int64_t t0, int64_t t1, float* scratch, float* m, float* l, float* o) {
  if (P.s.bits == 2) attend_bits<2>(P, b, h, t0, t1, scratch, m, l, o);
  else attend_bits<4>(P, b, h, t0, t1, scratch, m, l, o);
}

}  // namespace attnbench::cpu::kivi::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const kivi::Kernels& isa_kernels<kivi::Kernels, Isa::ATTNBENCH_ISA>() {
  static const kivi::Kernels table{&kivi::ATTNBENCH_ISA::attend};
  return table;
}
}  // namespace attnbench::cpu
