// 8-lane fp32 vectors for the x86-64-v3 baseline (AVX2, FMA, F16C). Mirrors simd_avx512.h so
// kernels are written once as templates over the vector type.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace attnbench::cpu {

struct Avx2 {
  static constexpr int W = 8;
  using V = __m256;

  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static float hsum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float hmax(V v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static V load_f16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static V load_bf16(const uint16_t* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  static void store_f16(uint16_t* p, V v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static void store_bf16(uint16_t* p, V v) {  // round to nearest even (no NaN reaches here)
    __m256i b = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    b = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7FFF)), lsb), 16);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
  }
  // e^x to about 1 ulp (Cephes' expf polynomial); exactly 0 below −87.3 (and for −inf).
  static V exp(V x) {
    const V underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33654f), _CMP_LT_OQ);
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.33654f)), _mm256_set1_ps(88.3762626647949f));
    const V fx = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
    V p = _mm256_set1_ps(1.9875691500E-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507E-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073E-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894E-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459E-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201E-1f));
    V y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
    y = _mm256_mul_ps(y, _mm256_castsi256_ps(e));
    return _mm256_andnot_ps(underflow, y);
  }
  // W 16-bit floats (f16, or bf16 when !f16) p[0], p[stride], ..., as fp32: one gather of the
  // 32-bit words they start (the low halves), so the last may read 2 bytes past its element.
  static V load_half_strided(const uint16_t* p, int64_t stride, bool f16) {
    V first, second;  // the second halves' conversion is dead code to the compiler
    load_half_pairs_strided(p, stride, f16, first, second);
    return first;
  }
  // Both 16-bit floats of the 32-bit words at p, p + stride, ...: the first halves into `first`,
  // the second into `second` (two adjacent groups' scales in one gather).
  static void load_half_pairs_strided(const uint16_t* p, int64_t stride, bool f16, V& first, V& second) {
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(2 * stride)));
    const __m256i w = _mm256_i32gather_epi32(reinterpret_cast<const int*>(p), idx, 1);
    if (!f16) {
      first = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
      second = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
      return;
    }
    const auto widen = [](__m256i lo) {
      return _mm256_cvtph_ps(_mm_packus_epi32(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1)));
    };
    first = widen(_mm256_and_si256(w, _mm256_set1_epi32(0xffff)));
    second = widen(_mm256_srli_epi32(w, 16));
  }
  // dst[g·ld + j] = src[j·groups + g] as fp32 for j < n, 16-bit floats in rows of `groups` (at
  // most 4) turned into a run per group; writes through n rounded up to W, zeros past n.
  static void halves_by_group(const uint16_t* src, int64_t n, int64_t groups, bool f16, float* dst, int64_t ld) {
    for (int64_t g = 0; g < groups; ++g) {
      int64_t j = 0;
      for (; j + W <= n; j += W) _mm256_storeu_ps(dst + g * ld + j, load_half_strided(src + j * groups + g, groups, f16));
      if (j < n) {  // the last gather would read past the rows: the tail through memory
        uint16_t tail[W] = {};
        for (int64_t k = j; k < n; ++k) tail[k - j] = src[k * groups + g];
        _mm256_storeu_ps(dst + g * ld + j, f16 ? load_f16(tail) : load_bf16(tail));
      }
    }
  }
  // Codes first .. first + W − 1 of BITS bits (2 or 4) packed in 32-bit words (code i of a word in
  // bits [i·BITS, (i + 1)·BITS)), as floats; first a multiple of W. Reads only the word they sit in.
  template <int BITS>
  static V codes(const uint32_t* words, int64_t first) {
    if constexpr (BITS == 2) {  // vpermps reads an index's low 3 bits: code + 4·(next code's low bit)
      const __m256i w = _mm256_set1_epi32(static_cast<int>(words[first / 16]));
      const __m256i sh = first % 16 ? _mm256_setr_epi32(16, 18, 20, 22, 24, 26, 28, 30) : _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
      return _mm256_permutevar8x32_ps(_mm256_setr_ps(0, 1, 2, 3, 0, 1, 2, 3), _mm256_srlv_epi32(w, sh));
    } else {
      const __m256i w = _mm256_set1_epi32(static_cast<int>(words[first / 8]));
      const __m256i sh = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
      return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srlv_epi32(w, sh), _mm256_set1_epi32(15)));
    }
  }
};

}  // namespace attnbench::cpu
