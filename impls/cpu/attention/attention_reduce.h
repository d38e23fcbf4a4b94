// Horizontal sums of many dot products at once, for the decode kernel: one vector accumulator per
// (query row, key) is folded into one vector holding W keys' scores, so no key pays a full
// horizontal sum of its own (about 3 shuffles and adds per key instead of ~8).
//   sum4(a, b, c, d)   each 128-bit lane i of the result holds the sums of lane i of a, b, c, d;
//   fold(x, y)         halves the number of partial sums per key: for vectors whose 128-bit lanes
//                      hold 4 keys' partials, lanes 2i and 2i+1 are added, x's keys first, then
//                      y's. With 2 lanes (AVX2) one fold, with 4 (AVX-512) two levels give each
//                      key's total in key order.
// Included by the per-ISA kernel files after their simd_*.h.
#pragma once

#include <immintrin.h>

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

}  // namespace attnbench::cpu::attn
