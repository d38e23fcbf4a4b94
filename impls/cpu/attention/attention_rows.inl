// What both CPU attention kernels share (included by attention_kernel.inl, once per ISA, inside its
// namespace): storage rows to and from fp32, the query rows a task packs, and how a task's rows
// are finished (normalised into O/LSE, or left as a flash-decoding partial).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "../runtime/simd_rows.h"
#include "attention_reduce.h"

namespace attnbench::cpu::attn::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;

inline const char* row_ptr(const void* base, DType t, int64_t elem) {
  return static_cast<const char*>(base) + elem * static_cast<int64_t>(dtype_size(t));
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

// Index of packed row r of group g in the [batch, q_heads, q_len] row space of Q, O and LSE.
inline int64_t query_row(const Problem& P, int64_t b, int64_t g, int64_t r) {
  const int64_t G = P.s.group, h = g * G + r % G, i = r / G;
  return (b * P.s.q_heads + h) * P.s.q_len + i;
}

// scale·Q of rows [r0, r0 + nr) as fp32 rows of dp (zero-padded).
inline void pack_queries(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t nr, float* q) {
  const int64_t d = P.s.head_dim, dp = P.dp;
  for (int64_t rr = 0; rr < nr; ++rr) {
    float* row = q + rr * dp;
    row_to_f32<S>(row_ptr(P.q, P.dtype, query_row(P, b, g, r0 + rr) * d), P.dtype, d, dp, row);
    for (int64_t x = 0; x < dp; x += W) S::store(row + x, S::mul(S::load(row + x), S::set1(P.scale)));
  }
}

// Keys each row sees within the task's range [j0, j1): [j0, end[rr]).
inline int64_t visible_ends(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t nr, int64_t j0, int64_t j1,
                            int64_t* end) {
  const int64_t kv_len = P.kv_len[attention::kv_len_index(P.s, b, g)], G = P.s.group;
  j1 = std::min(j1, kv_len);
  int64_t jmax = j0;
  for (int64_t rr = 0; rr < nr; ++rr) {
    end[rr] = std::max(j0, std::min(j1, attention::visible_end(P.s, kv_len, (r0 + rr) / G)));
    jmax = std::max(jmax, end[rr]);
  }
  return jmax;
}

// Row rr's unnormalised o (dp floats, overwritten), running max m and sum l: into the partial
// outputs, or normalised into O and LSE.
inline void finish_row(const Problem& P, int64_t b, int64_t g, int64_t r0, int64_t rr, float m, float l, float* o,
                       const PartialOut* partial) {
  const int64_t dp = P.dp, d = P.s.head_dim;
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
  } else {
    const V inv = S::set1(1.0f / l);
    for (int64_t x = 0; x < dp; x += W) S::store(o + x, S::mul(S::load(o + x), inv));
    P.lse[row] = m + std::log(l);
  }
  from_f32(o, d, P.dtype, static_cast<char*>(P.o) + row * d * static_cast<int64_t>(dtype_size(P.dtype)));
}

}  // namespace attnbench::cpu::attn::ATTNBENCH_ISA
