// Horizontal sums of many dot products at once, for the decode kernel: one vector accumulator per
// (query row, key) is folded into one vector holding W keys' scores, so no key pays a full
// horizontal sum of its own (about 3 shuffles and adds per key instead of ~8).
//   sum4(a, b, c, d)   each 128-bit lane i of the result holds the sums of lane i of a, b, c, d;
//   fold(x, y)         halves the number of partial sums per key: for vectors whose 128-bit lanes
//                      hold 4 keys' partials, lanes 2i and 2i+1 are added, x's keys first, then
//                      y's. With 2 lanes (AVX2) one fold, with 4 (AVX-512) two levels give each
//                      key's total in key order.
// transpose_tile (below) serves the prefill kernel. Included by the per-ISA kernel files.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace attnbench::cpu::attn {

inline __m256 sum4(__m256 a, __m256 b, __m256 c, __m256 d) {
  const __m256 ab = _mm256_add_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));  // a02 b02 a13 b13
  const __m256 cd = _mm256_add_ps(_mm256_unpacklo_ps(c, d), _mm256_unpackhi_ps(c, d));
  return _mm256_add_ps(_mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)), _mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
}

inline __m256 fold(__m256 x, __m256 y) {
  return _mm256_add_ps(_mm256_permute2f128_ps(x, y, 0x20), _mm256_permute2f128_ps(x, y, 0x31));
}

#ifdef __AVX512F__
inline __m512 sum4(__m512 a, __m512 b, __m512 c, __m512 d) {
  const __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
  const __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
  return _mm512_add_ps(_mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
}

inline __m512 fold(__m512 x, __m512 y) {
  return _mm512_add_ps(_mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(3, 1, 3, 1)));
}
#endif

// The logits of W keys (rows of dp floats, fp32) against one query row: one vector, in key order,
// each key's dot product summed by sum4 and fold (the KV steps' slot scores).
template <typename S>
inline typename S::V keys_logits(const float* q, const float* keys, int64_t dp) {
  constexpr int W = S::W;
  typename S::V quad[W / 4];
  for (int t = 0; t < W / 4; ++t) {
    typename S::V acc[4] = {S::zero(), S::zero(), S::zero(), S::zero()};
    for (int64_t x = 0; x < dp; x += W) {
      const typename S::V qv = S::load(q + x);
      for (int u = 0; u < 4; ++u) acc[u] = S::fma(qv, S::load(keys + (4 * t + u) * dp + x), acc[u]);
    }
    quad[t] = sum4(acc[0], acc[1], acc[2], acc[3]);
  }
  if constexpr (W == 8) return fold(quad[0], quad[1]);
  else return fold(fold(quad[0], quad[1]), fold(quad[2], quad[3]));
}

}  // namespace attnbench::cpu::attn

namespace attnbench::cpu::attn {

// dst[x·ldd + j] = src[j·lds + x] for a W×W tile (W = the vector width; the last argument picks
// the ISA): the prefill kernel's K block transpose in shuffles instead of W² scalar moves.
inline void transpose_tile(const float* src, int64_t lds, float* dst, int64_t ldd, __m256) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    const __m256 a = _mm256_loadu_ps(src + 2 * i * lds), b = _mm256_loadu_ps(src + (2 * i + 1) * lds);
    t[2 * i] = _mm256_unpacklo_ps(a, b);      // per 128-bit lane: a0 b0 a1 b1
    t[2 * i + 1] = _mm256_unpackhi_ps(a, b);  //                   a2 b2 a3 b3
  }
  for (int i = 0; i < 2; ++i) {  // u[4i + k], lane L: column 4L + k of rows 4i..4i+3
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(dst + k * ldd, _mm256_permute2f128_ps(u[k], u[4 + k], 0x20));
    _mm256_storeu_ps(dst + (4 + k) * ldd, _mm256_permute2f128_ps(u[k], u[4 + k], 0x31));
  }
}

#ifdef __AVX512F__
inline void transpose_tile(const float* src, int64_t lds, float* dst, int64_t ldd, __m512) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    const __m512 a = _mm512_loadu_ps(src + 2 * i * lds), b = _mm512_loadu_ps(src + (2 * i + 1) * lds);
    t[2 * i] = _mm512_unpacklo_ps(a, b);
    t[2 * i + 1] = _mm512_unpackhi_ps(a, b);
  }
  for (int i = 0; i < 4; ++i) {  // u[4i + k], lane L: column 4L + k of rows 4i..4i+3
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {  // gather lane L of the four row groups into column 4L + k
    const __m512 v0 = _mm512_shuffle_f32x4(u[k], u[4 + k], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 v1 = _mm512_shuffle_f32x4(u[k], u[4 + k], _MM_SHUFFLE(3, 1, 3, 1));
    const __m512 w0 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 w1 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(3, 1, 3, 1));
    _mm512_storeu_ps(dst + k * ldd, _mm512_shuffle_f32x4(v0, w0, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_storeu_ps(dst + (8 + k) * ldd, _mm512_shuffle_f32x4(v0, w0, _MM_SHUFFLE(3, 1, 3, 1)));
    _mm512_storeu_ps(dst + (4 + k) * ldd, _mm512_shuffle_f32x4(v1, w1, _MM_SHUFFLE(2, 0, 2, 0)));
    _mm512_storeu_ps(dst + (12 + k) * ldd, _mm512_shuffle_f32x4(v1, w1, _MM_SHUFFLE(3, 1, 3, 1)));
  }
}
#endif

}  // namespace attnbench::cpu::attn
