// The few-rows kernel (decode, speculative verification: at most kDirectRows packed query rows),
// included by attention_kernel.inl once per ISA. It is bound by reading K and V once, so it reads
// them in place in their storage dtype, widens them to fp32 in registers (no packing copies), and
// keeps the per-key work small:
//   scores   a register tile of kDecRows query rows × 4 keys accumulates over the head dim, and
//            attention_reduce.h folds the tiles of W keys into one vector of W scores per row
//            (no per-key horizontal sum);
//   softmax  per block of kDecKeys keys, one max and one vector exp per W keys; l is kept as a
//            vector and summed once at the end;
//   P·V      a register tile of kDecRows rows × kDecCols dim vectors over the block's keys.
// Heads whose dim is not a multiple of W are widened into a zero-padded block first (the in-place
// loads would otherwise cross into the next row).

namespace attnbench::cpu::attn::ATTNBENCH_ISA {

constexpr int kDecRows = W == 16 ? 4 : 2;  // AVX2 has 16 registers: 2 rows × 4 keys of accumulators
constexpr int kDecKeys = 4 * W;            // keys per online-softmax step
constexpr int kDecCols = 4;                // dim vectors per P·V tile

// Rows of K or V from a block's first key, read in their storage dtype as fp32 vectors. touch()
// prefetches chunk c of the row kPrefetchBytes ahead into L2, once per cache line: with the
// arithmetic in between, the hardware prefetcher alone kept too few lines in flight (measured:
// 26% of a plain read's bandwidth without, 60–80% with, on this project's shared 2-core VM).
constexpr int64_t kPrefetchBytes = 64 << 10;
struct Bf16 { uint16_t bits; };  // element types of InPlace rows
struct F16 { uint16_t bits; };

template <typename T>
inline V load_as_f32(const T* at) {
  if constexpr (std::is_same_v<T, float>) return S::load(at);
  else if constexpr (std::is_same_v<T, Bf16>) return S::load_bf16(reinterpret_cast<const uint16_t*>(at));
  else return S::load_f16(reinterpret_cast<const uint16_t*>(at));
}
inline int64_t prefetch_rows(int64_t row_bytes) { return std::max<int64_t>(1, kPrefetchBytes / row_bytes); }

template <typename T>
struct InPlace {
  const T* p;
  int64_t ld;
  int64_t ahead;  // bytes: whole rows, about kPrefetchBytes
  InPlace(const void* base, int64_t ld_) : p(static_cast<const T*>(base)), ld(ld_) {
    const int64_t row_bytes = ld * static_cast<int64_t>(sizeof(T));
    ahead = prefetch_rows(row_bytes) * row_bytes;
  }
  V load(int64_t j, int64_t c) const { return load_as_f32(p + j * ld + c * W); }
  void touch(int64_t j, int64_t c) const {
    if ((c * W * sizeof(T)) % 64 == 0) _mm_prefetch(reinterpret_cast<const char*>(p + j * ld + c * W) + ahead, _MM_HINT_T1);
  }
};
// Rows listed by an index list (gathered keys, attention_common.h key_row), read in place: the
// same loads as InPlace at the listed rows, and the prefetch reaches the row listed kGatherAhead
// positions ahead (never a list entry past `last`, the block's last readable one). Scattered rows
// give the hardware prefetcher nothing to follow, so every row's lines are asked for here, and a
// short distance keeps a task's first rows from waiting.
constexpr int64_t kGatherAhead = 32;
template <typename T>
struct Gathered {
  const T* p;          // the group's first row
  const int32_t* idx;  // the list from the block's first position
  int64_t ld, ahead, last;
  Gathered(const void* base, const int32_t* idx_, int64_t ld_, int64_t last_)
      : p(static_cast<const T*>(base)), idx(idx_), ld(ld_), ahead(kGatherAhead), last(last_) {}
  V load(int64_t j, int64_t c) const { return load_as_f32(p + idx[j] * ld + c * W); }
  void touch(int64_t j, int64_t c) const {
    if ((c * W * sizeof(T)) % 64 == 0)
      _mm_prefetch(reinterpret_cast<const char*>(p + idx[std::min(j + ahead, last)] * ld + c * W), _MM_HINT_T1);
  }
};
// A block widened into scratch (head dims off the vector width): nothing to prefetch.
struct Widened {
  const float* p;
  int64_t ld;
  V load(int64_t j, int64_t c) const { return S::load(p + j * ld + c * W); }
  void touch(int64_t, int64_t) const {}
};

// NR rows × keys j..j+3 (each clamped to jlast, a key of the block), reduced by sum4.
template <int NR, class R>
inline void quad_scores(const float* q, int64_t dp, int64_t nc, const R& k, int64_t j, int64_t jlast, V* out) {
  const int64_t ja = std::min(j, jlast), jb = std::min(j + 1, jlast), jc = std::min(j + 2, jlast), jd = std::min(j + 3, jlast);
  V acc[NR][4];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < 4; ++t) acc[r][t] = S::zero();
  for (int64_t c = 0; c < nc; ++c) {
    const V k0 = k.load(ja, c), k1 = k.load(jb, c), k2 = k.load(jc, c), k3 = k.load(jd, c);
    for (int t = 0; t < 4; ++t) k.touch(j + t, c);
    for (int r = 0; r < NR; ++r) {
      const V qv = S::load(q + r * dp + c * W);
      acc[r][0] = S::fma(qv, k0, acc[r][0]);
      acc[r][1] = S::fma(qv, k1, acc[r][1]);
      acc[r][2] = S::fma(qv, k2, acc[r][2]);
      acc[r][3] = S::fma(qv, k3, acc[r][3]);
    }
  }
  for (int r = 0; r < NR; ++r) out[r] = sum4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
}

// Scores of NR rows against keys j..j+W−1: one vector per row, into s[r·kDecKeys].
template <int NR, class R>
inline void vector_scores(const float* q, int64_t dp, int64_t nc, const R& k, int64_t j, int64_t jlast, float* s) {
  V a[NR], b[NR];
  quad_scores<NR>(q, dp, nc, k, j, jlast, a);
  quad_scores<NR>(q, dp, nc, k, j + 4, jlast, b);
  for (int r = 0; r < NR; ++r) a[r] = fold(a[r], b[r]);
  if constexpr (W == 16) {
    V c[NR], e[NR];
    quad_scores<NR>(q, dp, nc, k, j + 8, jlast, c);
    quad_scores<NR>(q, dp, nc, k, j + 12, jlast, e);
    for (int r = 0; r < NR; ++r) a[r] = fold(a[r], fold(c[r], e[r]));
  }
  for (int r = 0; r < NR; ++r) S::store(s + r * kDecKeys, a[r]);
}

// o[r][(c0 + c)·W + lane] = alpha[r]·o[…] + Σ_j p[r][j]·v[j][…] for NR rows and NC dim vectors.
template <int NR, int NC, class R>
inline void pv_tile_few(const float* p, int64_t bc, const R& v, int64_t c0, float* o, int64_t dp, const float* alpha) {
  V acc[NR][NC];
  for (int r = 0; r < NR; ++r) {
    const V a = S::set1(alpha[r]);
    for (int c = 0; c < NC; ++c) acc[r][c] = S::mul(S::load(o + r * dp + (c0 + c) * W), a);
  }
  for (int64_t j = 0; j < bc; ++j) {
    V vv[NC];
    for (int c = 0; c < NC; ++c) {
      vv[c] = v.load(j, c0 + c);
      v.touch(j, c0 + c);
    }
    for (int r = 0; r < NR; ++r) {
      const V pb = S::set1(p[r * kDecKeys + j]);
      for (int c = 0; c < NC; ++c) acc[r][c] = S::fma(pb, vv[c], acc[r][c]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int c = 0; c < NC; ++c) S::store(o + r * dp + (c0 + c) * W, acc[r][c]);
}

template <int NR, class R>
inline void pv_rows_few(const float* p, int64_t bc, const R& v, int64_t nc, float* o, int64_t dp, const float* alpha) {
  int64_t c0 = 0;
  for (; c0 + kDecCols <= nc; c0 += kDecCols) pv_tile_few<NR, kDecCols>(p, bc, v, c0, o, dp, alpha);
  switch (nc - c0) {
    case 1: pv_tile_few<NR, 1>(p, bc, v, c0, o, dp, alpha); break;
    case 2: pv_tile_few<NR, 2>(p, bc, v, c0, o, dp, alpha); break;
    case 3: pv_tile_few<NR, 3>(p, bc, v, c0, o, dp, alpha); break;
    default: break;
  }
}

struct FewScratch {
  float *q, *o, *s, *l, *alpha, *kbuf, *vbuf;
};

inline FewScratch few_layout(float* base, int64_t dp, int64_t dvp) {
  FewScratch f;
  f.q = base;                          // [kDirectRows][dp]  scale·Q
  f.o = f.q + kDirectRows * dp;        // [kDirectRows][dvp] unnormalised O
  f.s = f.o + kDirectRows * dvp;       // [kDirectRows][kDecKeys]  scores, then P
  f.l = f.s + kDirectRows * kDecKeys;  // [kDirectRows][W]   lane-wise sums of P
  f.alpha = f.l + kDirectRows * W;     // [kDirectRows]
  f.kbuf = f.alpha + kDirectRows;      // [kDecKeys][dp]     widened K block (dims off the vector width)
  f.vbuf = f.kbuf + kDecKeys * dp;     // [kDecKeys][dvp]
  return f;
}

// Online softmax over the scores of one block of keys [jb, jb + bc): P overwrites f.s (0 for the
// keys a row does not see), f.l accumulates lane-wise sums, f.alpha the rescale of O. m: running
// maxima.
using FewSpans = Spans<kDirectRows>;
inline void softmax_block(const Problem& P, const FewScratch& f, int64_t nr, int64_t jb, int64_t bc, const FewSpans& sp,
                          float* m) {
  const int64_t nv = (bc + W - 1) / W;
  const bool modified = attention::modifies_logits(P.s);
  for (int64_t rr = 0; rr < nr; ++rr) {
    float* s = f.s + rr * kDecKeys;
    if (modified) modify_logits(P, sp, rr, jb, s, nv * W);
    alignas(64) float sg[kDecKeys];
    if (P.s.signed_weights) split_signs(s, sg, nv * W);
    apply_mask(block_mask(sp, rr, jb, bc), s, nv * W);
    if (P.s.tree_mask) apply_tree_mask(P, sp, rr, jb, bc, s);
    V mv = S::load(s);
    for (int64_t x = 1; x < nv; ++x) mv = S::max(mv, S::load(s + x * W));
    const float m_new = std::max(m[rr], S::hmax(mv));
    if (m_new == -INFINITY) {  // nothing visible yet: P = 0, O and l stay 0
      f.alpha[rr] = 1.0f;
      std::fill(s, s + nv * W, 0.0f);
      continue;
    }
    const float alpha = std::exp(m[rr] - m_new);  // 0 when m was −inf
    const V mb = S::set1(m_new);
    V sum = S::mul(S::load(f.l + rr * W), S::set1(alpha));
    for (int64_t x = 0; x < nv; ++x) {
      const V e = S::exp(S::sub(S::load(s + x * W), mb));
      S::store(s + x * W, e);
      sum = S::add(sum, e);
    }
    S::store(f.l + rr * W, sum);
    f.alpha[rr] = alpha;
    m[rr] = m_new;
    if (P.s.signed_weights) apply_signs(s, sg, nv * W);
  }
}

// One block of keys [jb, jb + bc) for nr rows; k and v start at key jb.
template <class R>
inline void few_block(const Problem& P, const FewScratch& f, int64_t nr, int64_t jb, int64_t bc, const FewSpans& sp,
                      const R& k, const R& v, float* m) {
  const int64_t dp = P.dp, dvp = P.dvp, nc = dp / W, nvc = dvp / W, nv = (bc + W - 1) / W;
  for_tiles<kDecRows>(nr, [&](int64_t r, auto n) {
    for (int64_t x = 0; x < nv; ++x)
      vector_scores<decltype(n)::value>(f.q + r * dp, dp, nc, k, x * W, bc - 1, f.s + r * kDecKeys + x * W);
  });
  softmax_block(P, f, nr, jb, bc, sp, m);
  for_tiles<kDecRows>(nr, [&](int64_t r, auto n) {
    pv_rows_few<decltype(n)::value>(f.s + r * kDecKeys, bc, v, nvc, f.o + r * dvp, dvp, f.alpha + r);
  });
}


// Rows [r0, r0 + nr) of group (b, g), nr <= kDirectRows, over keys [j0, j1).
inline void attend_few(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t nr, int64_t j0, int64_t j1,
                       float* scratch, const PartialOut* partial) {
  const int64_t d = P.s.head_dim, dp = P.dp, dv = P.s.v_head_dim, dvp = P.dvp, ldv = P.s.v_stride;
  const FewScratch f = few_layout(scratch, dp, dvp);
  FewSpans sp;
  float m[kDirectRows];
  visible_spans(P, b, g, r0, nr, j0, j1, sp);
  pack_queries(P, b, g, r0, nr, f.q);
  std::fill(f.o, f.o + nr * dvp, 0.0f);
  std::fill(f.l, f.l + nr * W, 0.0f);
  std::fill(m, m + nr, -INFINITY);

  // The group's first key row; rows_at(base, row length, row stride, padded width, jb, bc, buffer,
  // whether the rows are keys).
  const int64_t kv0 = (b * P.s.kv_heads + g) * P.s.kv_cap;
  const auto run = [&](auto rows_at) {
    for_visible_blocks(sp, j0, kDecKeys, 1, [&](int64_t jb, int64_t bc) {
      few_block(P, f, nr, jb, bc, sp, rows_at(P.k, d, d, dp, jb, bc, f.kbuf, true),
                rows_at(P.v, dv, ldv, dvp, jb, bc, f.vbuf, false), m);
    });
  };
  // Gathered keys: the listed rows of the group's cache, in place.
  const auto gathered = [&](auto type) {
    using T = decltype(type);
    const int64_t bg = b * P.s.kv_heads + g;
    const int32_t* list = P.key_idx + (P.s.key_index == 2 ? bg : b) * P.s.kv_cap;
    run([&](const void* base, int64_t, int64_t ld, int64_t, int64_t jb, int64_t, float*, bool) {
      return Gathered<T>(static_cast<const T*>(base) + bg * P.s.cache_cap * ld, list + jb, ld, sp.key_end - 1 - jb);
    });
  };
  // The fused rope rotates each key as it is widened (the in-place loads cannot).
  if (d % W != 0 || dv % W != 0 || P.k_rope) {
    run([&](const void* base, int64_t n, int64_t ld, int64_t np, int64_t jb, int64_t bc, float* buf, bool is_k) {
      for (int64_t j = 0; j < bc; ++j) {
        row_to_f32<S>(row_ptr(base, P.dtype, attention::key_row(P.s, P.key_idx, b, g, jb + j) * ld), P.dtype, n, np, buf + j * np);
        if (is_k && P.k_rope) rotate_row(P, P.k_rope + (b * P.s.kv_cap + jb + j) * 2 * P.s.rope_dim, buf + j * np);
      }
      return Widened{buf, np};
    });
  } else if (P.s.key_index) {
    if (P.dtype == DType::f32) gathered(float{});
    else if (P.dtype == DType::bf16) gathered(Bf16{});
    else gathered(F16{});
  } else if (P.dtype == DType::f32) {
    run([&](const void* base, int64_t, int64_t ld, int64_t, int64_t jb, int64_t, float*, bool) {
      return InPlace<float>(static_cast<const float*>(base) + (kv0 + jb) * ld, ld);
    });
  } else if (P.dtype == DType::bf16) {
    run([&](const void* base, int64_t, int64_t ld, int64_t, int64_t jb, int64_t, float*, bool) {
      return InPlace<Bf16>(static_cast<const Bf16*>(base) + (kv0 + jb) * ld, ld);
    });
  } else {
    run([&](const void* base, int64_t, int64_t ld, int64_t, int64_t jb, int64_t, float*, bool) {
      return InPlace<F16>(static_cast<const F16*>(base) + (kv0 + jb) * ld, ld);
    });
  }
  for (int64_t rr = 0; rr < nr; ++rr) finish_row(P, b, g, r0, rr, m[rr], S::hsum(S::load(f.l + rr * W)), f.o + rr * dvp, partial);
}

}  // namespace attnbench::cpu::attn::ATTNBENCH_ISA
