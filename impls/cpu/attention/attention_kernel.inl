// The CPU attention kernel body, compiled once per ISA (runtime/isa.h: ATTNBENCH_SIMD is the
// vector struct, ATTNBENCH_ISA the namespace of this copy, so the two never meet at link time).
// See attention_kernel.h for the algorithm.

#include "attention_kernel.h"

#include "attention_rows.inl"
#include "attention_decode.inl"

namespace attnbench::cpu::attn::ATTNBENCH_ISA {

constexpr int BC = 4 * W;  // keys per block: the micro-kernel's width

struct ScratchLayout {
  float *q, *kt, *krow, *v, *p, *o, *m, *l;
};

inline ScratchLayout layout(float* base, int64_t dp, int64_t dvp) {
  ScratchLayout s;
  s.q = base;                              // [kMaxRowsPerTask][dp]  scale·Q in fp32
  s.kt = s.q + kMaxRowsPerTask * dp;       // [dp][BC]               transposed K block
  s.krow = s.kt + dp * BC;                 // [BC][dp]               K block rows in fp32
  s.v = s.krow + BC * dp;                  // [BC][dvp]              V block rows in fp32
  s.p = s.v + BC * dvp;                    // [kMaxRowsPerTask][BC]  scores, then probabilities
  s.o = s.p + kMaxRowsPerTask * BC;        // [kMaxRowsPerTask][dvp] unnormalised O
  s.m = s.o + kMaxRowsPerTask * dvp;       // [kMaxRowsPerTask]
  s.l = s.m + kMaxRowsPerTask;             // [kMaxRowsPerTask]
  return s;
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

template <typename F>
inline void by_four(int64_t n, F&& f) {  // f(first row, rows) with rows in 1..4
  int64_t r = 0;
  for (; r + 4 <= n; r += 4) f(r, 4);
  if (r < n) f(r, static_cast<int>(n - r));
}

// Many rows (prefill): rows [r0, r0 + nr) of group (b, g) over keys [j0, j1).
inline void attend_many(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t nr, int64_t j0, int64_t j1,
                        float* scratch, const PartialOut* partial) {
  const auto& s = P.s;
  const int64_t d = s.head_dim, dp = P.dp, dv = s.v_head_dim, dvp = P.dvp;
  const ScratchLayout sc = layout(scratch, dp, dvp);
  Spans<kMaxRowsPerTask> sp;
  visible_spans(P, b, g, r0, nr, j0, j1, sp);
  pack_queries(P, b, g, r0, nr, sc.q);
  std::fill(sc.m, sc.m + nr, -INFINITY);
  std::fill(sc.l, sc.l + nr, 0.0f);
  std::fill(sc.o, sc.o + nr * dvp, 0.0f);
  const int64_t kv_base = (b * s.kv_heads + g) * s.kv_cap;
  // f32 rows whose width is a multiple of the vector width are read in place.
  const bool contiguous = !s.key_index;  // listed keys are widened row by row
  const bool direct_k = P.dtype == DType::f32 && d == dp && !P.k_rope && contiguous,
             direct_v = P.dtype == DType::f32 && dv == dvp && contiguous;
  const bool modified = attention::modifies_logits(s);
  for_visible_blocks(sp, j0, BC, 1, [&](int64_t jb, int64_t bc) {
    const float* krow = sc.krow;
    const float* vrow = sc.v;
    if (direct_k) krow = static_cast<const float*>(P.k) + (kv_base + jb) * d;
    else
      for (int64_t j = 0; j < bc; ++j) {
        row_to_f32<S>(row_ptr(P.k, P.dtype, attention::key_row(s, P.key_idx, b, g, jb + j) * d), P.dtype, d, dp, sc.krow + j * dp);
        if (P.k_rope) rotate_row(P, P.k_rope + (b * s.kv_cap + jb + j) * 2 * s.rope_dim, sc.krow + j * dp);
      }
    if (direct_v) vrow = static_cast<const float*>(P.v) + (kv_base + jb) * s.v_stride;
    else
      for (int64_t j = 0; j < bc; ++j)
        row_to_f32<S>(row_ptr(P.v, P.dtype, attention::key_row(s, P.key_idx, b, g, jb + j) * s.v_stride), P.dtype, dv, dvp, sc.v + j * dvp);
    // Scores.
    const int nc = static_cast<int>((bc + W - 1) / W);
    const int64_t ldk = direct_k ? d : dp, full_keys = bc / W * W, full_dims = d / W * W;
    for (int64_t j = 0; j < full_keys; j += W)
      for (int64_t x = 0; x < full_dims; x += W) transpose_tile(krow + j * ldk + x, ldk, sc.kt + x * BC + j, BC, V{});
    for (int64_t x = 0; x < d; ++x) {  // the edges: dims off the vector width, the last keys, zeros
      float* kt = sc.kt + x * BC;
      for (int64_t j = x < full_dims ? full_keys : 0; j < bc; ++j) kt[j] = krow[j * ldk + x];
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
    // Online softmax; P overwrites S. Keys a row does not see get P = 0.
    for (int64_t rr = 0; rr < nr; ++rr) {
      float* row = sc.p + rr * BC;
      const BlockMask mask = block_mask(sp, rr, jb, bc);
      if (mask.visible() == 0) {
        std::fill(row, row + BC, 0.0f);
        continue;
      }
      if (modified) modify_logits(P, sp, rr, jb, row, BC);
      alignas(64) float sg[BC];
      if (s.signed_weights) split_signs(row, sg, BC);
      apply_mask(mask, row, BC);
      if (s.tree_mask) apply_tree_mask(P, sp, rr, jb, bc, row);
      V mv = S::load(row);
      for (int c = 1; c < BC / W; ++c) mv = S::max(mv, S::load(row + c * W));
      const float m_new = std::max(sc.m[rr], S::hmax(mv));
      if (m_new == -INFINITY) {  // a tree row's block of other branches, nothing seen before it
        std::fill(row, row + BC, 0.0f);
        continue;
      }
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
      if (s.signed_weights) apply_signs(row, sg, BC);
      if (alpha != 1.0f) {
        const V a = S::set1(alpha);
        float* o = sc.o + rr * dvp;
        for (int64_t x = 0; x < dvp; x += W) S::store(o + x, S::mul(S::load(o + x), a));
      }
    }
    // O += P·V.
    const int64_t ldv = direct_v ? s.v_stride : dvp;
    by_four(nr, [&](int64_t r, int n) {
      const float* p = sc.p + r * BC;
      float* o = sc.o + r * dvp;
      switch (n) {
        case 1: pv_rows<1>(p, bc, vrow, ldv, o, dvp); break;
        case 2: pv_rows<2>(p, bc, vrow, ldv, o, dvp); break;
        case 3: pv_rows<3>(p, bc, vrow, ldv, o, dvp); break;
        default: pv_rows<4>(p, bc, vrow, ldv, o, dvp); break;
      }
    });
  });
  for (int64_t rr = 0; rr < nr; ++rr) finish_row(P, b, g, r0, rr, sc.m[rr], sc.l[rr], sc.o + rr * dvp, partial);
}

void attend(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t r1, int64_t j0, int64_t j1, float* scratch,
            const PartialOut* partial) {
  if (r1 - r0 <= kDirectRows) attend_few(P, b, g, r0, r1 - r0, j0, j1, scratch, partial);
  else attend_many(P, b, g, r0, r1 - r0, j0, j1, scratch, partial);
}

}  // namespace attnbench::cpu::attn::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const attn::KernelTable& isa_kernels<attn::KernelTable, Isa::ATTNBENCH_ISA>() {
  static const attn::KernelTable table{attn::ATTNBENCH_ISA::W, &attn::ATTNBENCH_ISA::attend};
  return table;
}
}  // namespace attnbench::cpu
