// The CPU attention kernel body, included once per ISA by attention_kernel_<isa>.cpp with
// ATTN_SIMD (the vector struct) and ATTN_NS (a namespace of its own, so the two copies never
// meet at link time) defined. See attention_kernel.h for the algorithm.

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attnbench::cpu::attn::ATTN_NS {

using S = ATTN_SIMD;
using V = S::V;
constexpr int W = S::W;
constexpr int BC = 4 * W;  // keys per block: the micro-kernel's width

struct ScratchLayout {
  float *q, *kt, *krow, *v, *p, *o, *m, *l;
};

inline ScratchLayout layout(float* base, int64_t dp) {
  ScratchLayout s;
  s.q = base;                              // [kMaxRowsPerTask][dp]  scale·Q in fp32
  s.kt = s.q + kMaxRowsPerTask * dp;       // [dp][BC]               transposed K block
  s.krow = s.kt + dp * BC;                 // [BC][dp]               K block rows in fp32
  s.v = s.krow + BC * dp;                  // [BC][dp]               V block rows in fp32
  s.p = s.v + BC * dp;                     // [kMaxRowsPerTask][BC]  scores, then probabilities
  s.o = s.p + kMaxRowsPerTask * BC;        // [kMaxRowsPerTask][dp]  unnormalised O
  s.m = s.o + kMaxRowsPerTask * dp;        // [kMaxRowsPerTask]
  s.l = s.m + kMaxRowsPerTask;             // [kMaxRowsPerTask]
  return s;
}

inline size_t layout_floats(int64_t dp) {
  return static_cast<size_t>(2 * kMaxRowsPerTask * dp + dp * BC + 2 * BC * dp + kMaxRowsPerTask * BC + 2 * kMaxRowsPerTask);
}

// n elements of `src` (storage dtype) into dst as fp32, zero-filled up to dp.
inline void to_f32(const void* src, DType t, int64_t n, int64_t dp, float* dst) {
  int64_t x = 0;
  switch (t) {
    case DType::f32: {
      const auto* s = static_cast<const float*>(src);
      for (; x + W <= n; x += W) S::store(dst + x, S::load(s + x));
      for (; x < n; ++x) dst[x] = s[x];
      break;
    }
    case DType::f16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (; x + W <= n; x += W) S::store(dst + x, S::load_f16(s + x));
      for (; x < n; ++x) dst[x] = f16_to_f32(s[x]);
      break;
    }
    default: {  // bf16
      const auto* s = static_cast<const uint16_t*>(src);
      for (; x + W <= n; x += W) S::store(dst + x, S::load_bf16(s + x));
      for (; x < n; ++x) dst[x] = bf16_to_f32(s[x]);
      break;
    }
  }
  for (; x < dp; ++x) dst[x] = 0.0f;
}

// n fp32 values (n a multiple of W, or a scalar tail) into the storage dtype.
inline void from_f32(const float* src, int64_t n, DType t, void* dst) {
  int64_t x = 0;
  switch (t) {
    case DType::f32: std::memcpy(dst, src, n * sizeof(float)); return;
    case DType::f16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (; x + W <= n; x += W) S::store_f16(d + x, S::load(src + x));
      for (; x < n; ++x) d[x] = f32_to_f16(src[x]);
      return;
    }
    default: {
      auto* d = static_cast<uint16_t*>(dst);
      for (; x + W <= n; x += W) S::store_bf16(d + x, S::load(src + x));
      for (; x < n; ++x) d[x] = f32_to_bf16(src[x]);
      return;
    }
  }
}

inline const char* row_ptr(const void* base, DType t, int64_t elem) {
  return static_cast<const char*>(base) + elem * static_cast<int64_t>(dtype_size(t));
}

// s[r][c·W + lane] = Σ_x q[r][x]·kt[x][c·W + lane] for NR rows and NC key vectors.
template <int NR, int NC>
inline void qk_tile(const float* q, int64_t dp, int64_t d, const float* kt, float* s) {
  V acc[NR][NC];
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < NC; ++c) acc[r][c] = S::zero();
  for (int64_t x = 0; x < d; ++x) {
    V kv[NC];
    for (int c = 0; c < NC; ++c) kv[c] = S::load(kt + x * BC + c * W);
    for (int r = 0; r < NR; ++r) {
      const V qb = S::set1(q[r * dp + x]);
      for (int c = 0; c < NC; ++c) acc[r][c] = S::fma(qb, kv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < NC; ++c) S::store(s + r * BC + c * W, acc[r][c]);
}

template <int NR>
inline void qk_rows(const float* q, int64_t dp, int64_t d, const float* kt, int nc, float* s) {
  switch (nc) {
    case 1: qk_tile<NR, 1>(q, dp, d, kt, s); break;
    case 2: qk_tile<NR, 2>(q, dp, d, kt, s); break;
    case 3: qk_tile<NR, 3>(q, dp, d, kt, s); break;
    default: qk_tile<NR, 4>(q, dp, d, kt, s); break;
  }
}

// o[r][x0 + c·W + lane] += Σ_j p[r][j]·v[j][x0 + c·W + lane] for NR rows and NC dim vectors.
template <int NR, int NC>
inline void pv_tile(const float* p, int64_t bc, const float* v, int64_t ldv, float* o, int64_t dp, int64_t x0) {
  V acc[NR][NC];
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < NC; ++c) acc[r][c] = S::load(o + r * dp + x0 + c * W);
  for (int64_t j = 0; j < bc; ++j) {
    V vv[NC];
    for (int c = 0; c < NC; ++c) vv[c] = S::load(v + j * ldv + x0 + c * W);
    for (int r = 0; r < NR; ++r) {
      const V pb = S::set1(p[r * BC + j]);
      for (int c = 0; c < NC; ++c) acc[r][c] = S::fma(pb, vv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < NC; ++c) S::store(o + r * dp + x0 + c * W, acc[r][c]);
}

template <int NR>
inline void pv_rows(const float* p, int64_t bc, const float* v, int64_t ldv, float* o, int64_t dp) {
  int64_t x0 = 0;
  for (; x0 + 4 * W <= dp; x0 += 4 * W) pv_tile<NR, 4>(p, bc, v, ldv, o, dp, x0);
  switch ((dp - x0) / W) {
    case 1: pv_tile<NR, 1>(p, bc, v, ldv, o, dp, x0); break;
    case 2: pv_tile<NR, 2>(p, bc, v, ldv, o, dp, x0); break;
    case 3: pv_tile<NR, 3>(p, bc, v, ldv, o, dp, x0); break;
    default: break;
  }
}

// Dot products of NR query rows with one key row (direct path for few rows).
template <int NR>
inline void qk_direct(const float* q, int64_t dp, const float* k, float* s_col /* s[r·BC] */) {
  V acc[NR];
  for (int r = 0; r < NR; ++r) acc[r] = S::zero();
  for (int64_t x = 0; x < dp; x += W) {
    const V kv = S::load(k + x);
    for (int r = 0; r < NR; ++r) acc[r] = S::fma(S::load(q + r * dp + x), kv, acc[r]);
  }
  for (int r = 0; r < NR; ++r) s_col[r * BC] = S::hsum(acc[r]);
}

template <typename F>
inline void by_four(int64_t n, F&& f) {  // f(first row, rows) with rows in 1..4
  int64_t r = 0;
  for (; r + 4 <= n; r += 4) f(r, 4);
  if (r < n) f(r, static_cast<int>(n - r));
}

void attend(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t r1, int64_t j0, int64_t j1, float* scratch,
            const PartialOut* partial) {
  const auto& s = P.s;
  const int64_t G = s.group(), d = s.head_dim, dp = P.dp, nr = r1 - r0;
  const ScratchLayout sc = layout(scratch, dp);
  const int64_t kv_len = P.kv_len[b];
  j1 = std::min(j1, kv_len);

  int64_t end[kMaxRowsPerTask];
  int64_t jmax = j0;
  for (int64_t rr = 0; rr < nr; ++rr) {
    end[rr] = std::min(j1, s.visible_end(kv_len, (r0 + rr) / G));
    jmax = std::max(jmax, end[rr]);
  }
  // Pack scale·Q as fp32 rows.
  for (int64_t rr = 0; rr < nr; ++rr) {
    const int64_t r = r0 + rr, h = g * G + r % G, i = r / G;
    float* qrow = sc.q + rr * dp;
    to_f32(row_ptr(P.q, P.dtype, ((b * s.q_heads + h) * s.q_len + i) * d), P.dtype, d, dp, qrow);
    for (int64_t x = 0; x < dp; x += W) S::store(qrow + x, S::mul(S::load(qrow + x), S::set1(P.scale)));
    sc.m[rr] = -INFINITY;
    sc.l[rr] = 0.0f;
    std::fill(sc.o + rr * dp, sc.o + (rr + 1) * dp, 0.0f);
  }
  const int64_t kv_base = (b * s.kv_heads + g) * s.kv_cap;
  const bool direct_f32 = P.dtype == DType::f32 && d == dp;  // K/V rows usable in place
  for (int64_t jb = j0; jb < jmax; jb += BC) {
    const int64_t bc = std::min<int64_t>(BC, jmax - jb);
    const float* krow = sc.krow;
    const float* vrow = sc.v;
    if (direct_f32) {
      krow = static_cast<const float*>(P.k) + (kv_base + jb) * d;
      vrow = static_cast<const float*>(P.v) + (kv_base + jb) * d;
    } else {
      for (int64_t j = 0; j < bc; ++j) {
        to_f32(row_ptr(P.k, P.dtype, (kv_base + jb + j) * d), P.dtype, d, dp, sc.krow + j * dp);
        to_f32(row_ptr(P.v, P.dtype, (kv_base + jb + j) * d), P.dtype, d, dp, sc.v + j * dp);
      }
    }
    // Scores.
    if (nr <= kDirectRows) {
      for (int64_t j = 0; j < bc; ++j)
        by_four(nr, [&](int64_t r, int n) {
          const float* q = sc.q + r * dp;
          float* col = sc.p + r * BC + j;
          switch (n) {
            case 1: qk_direct<1>(q, dp, krow + j * dp, col); break;
            case 2: qk_direct<2>(q, dp, krow + j * dp, col); break;
            case 3: qk_direct<3>(q, dp, krow + j * dp, col); break;
            default: qk_direct<4>(q, dp, krow + j * dp, col); break;
          }
        });
    } else {
      const int nc = static_cast<int>((bc + W - 1) / W);
      for (int64_t x = 0; x < d; ++x) {
        float* kt = sc.kt + x * BC;
        for (int64_t j = 0; j < bc; ++j) kt[j] = krow[j * dp + x];
        for (int64_t j = bc; j < nc * W; ++j) kt[j] = 0.0f;
      }
      by_four(nr, [&](int64_t r, int n) {
        const float* q = sc.q + r * dp;
        float* out = sc.p + r * BC;
        switch (n) {
          case 1: qk_rows<1>(q, dp, d, sc.kt, nc, out); break;
          case 2: qk_rows<2>(q, dp, d, sc.kt, nc, out); break;
          case 3: qk_rows<3>(q, dp, d, sc.kt, nc, out); break;
          default: qk_rows<4>(q, dp, d, sc.kt, nc, out); break;
        }
      });
    }
    // Online softmax; P overwrites S. Keys past a row's causal end get P = 0.
    for (int64_t rr = 0; rr < nr; ++rr) {
      float* row = sc.p + rr * BC;
      const int64_t visible = std::clamp<int64_t>(end[rr] - jb, 0, bc);
      for (int64_t j = visible; j < BC; ++j) row[j] = -INFINITY;
      if (visible == 0) {
        std::fill(row, row + BC, 0.0f);
        continue;
      }
      V mv = S::load(row);
      for (int c = 1; c < BC / W; ++c) mv = S::max(mv, S::load(row + c * W));
      const float m_new = std::max(sc.m[rr], S::hmax(mv));
      const float alpha = std::exp(sc.m[rr] - m_new);  // 0 when m was −inf
      const V mb = S::set1(m_new);
      V sum = S::zero();
      for (int c = 0; c < BC / W; ++c) {
        const V e = S::exp(S::sub(S::load(row + c * W), mb));
        S::store(row + c * W, e);
        sum = S::add(sum, e);
      }
      sc.l[rr] = sc.l[rr] * alpha + S::hsum(sum);
      sc.m[rr] = m_new;
      if (alpha != 1.0f) {
        const V a = S::set1(alpha);
        float* o = sc.o + rr * dp;
        for (int64_t x = 0; x < dp; x += W) S::store(o + x, S::mul(S::load(o + x), a));
      }
    }
    // O += P·V.
    const int64_t ldv = direct_f32 ? d : dp;
    by_four(nr, [&](int64_t r, int n) {
      const float* p = sc.p + r * BC;
      float* o = sc.o + r * dp;
      switch (n) {
        case 1: pv_rows<1>(p, bc, vrow, ldv, o, dp); break;
        case 2: pv_rows<2>(p, bc, vrow, ldv, o, dp); break;
        case 3: pv_rows<3>(p, bc, vrow, ldv, o, dp); break;
        default: pv_rows<4>(p, bc, vrow, ldv, o, dp); break;
      }
    });
  }
  // Results.
  for (int64_t rr = 0; rr < nr; ++rr) {
    float* o = sc.o + rr * dp;
    if (partial) {
      partial->m[rr] = sc.m[rr];
      partial->l[rr] = sc.l[rr];
      std::memcpy(partial->o + rr * dp, o, dp * sizeof(float));
      continue;
    }
    const int64_t r = r0 + rr, h = g * G + r % G, i = r / G;
    const int64_t row = (b * s.q_heads + h) * s.q_len + i;
    if (sc.l[rr] == 0.0f) {  // no visible key
      std::fill(o, o + dp, 0.0f);
      P.lse[row] = -INFINITY;
    } else {
      const V inv = S::set1(1.0f / sc.l[rr]);
      for (int64_t x = 0; x < dp; x += W) S::store(o + x, S::mul(S::load(o + x), inv));
      P.lse[row] = sc.m[rr] + std::log(sc.l[rr]);
    }
    from_f32(o, d, P.dtype, static_cast<char*>(P.o) + row * d * static_cast<int64_t>(dtype_size(P.dtype)));
  }
}

}  // namespace attnbench::cpu::attn::ATTN_NS
