// 16-lane fp32 vectors (AVX-512 F/BW/VL/DQ). Only translation units compiled with those flags
// include this header; callers reach them through runtime dispatch (runtime/isa.h).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace attnbench::cpu {

struct Avx512 {
  static constexpr int W = 16;
  using V = __m512;

  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static float hsum(V v) { return _mm512_reduce_add_ps(v); }
  static float hmax(V v) { return _mm512_reduce_max_ps(v); }
  static V load_f16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static V load_bf16(const uint16_t* p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  }
  static void store_f16(uint16_t* p, V v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static void store_bf16(uint16_t* p, V v) {  // round to nearest even (no NaN reaches here)
    __m512i b = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    b = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7FFF)), lsb), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(b));
  }
  // e^x to about 1 ulp (Cephes' expf polynomial); exactly 0 below −87.3 (and for −inf).
  static V exp(V x) {
    const __mmask16 underflow = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.33654f), _CMP_LT_OQ);
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.33654f)), _mm512_set1_ps(88.3762626647949f));
    const V fx = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V r = _mm512_fnmadd_ps(fx, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(fx, _mm512_set1_ps(-2.12194440e-4f), r);
    V p = _mm512_set1_ps(1.9875691500E-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507E-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073E-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894E-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459E-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201E-1f));
    V y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    y = _mm512_scalef_ps(y, fx);  // y·2^fx
    return _mm512_maskz_mov_ps(static_cast<__mmask16>(~underflow), y);
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
    const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32(static_cast<int>(2 * stride)));
    const __m512i w = _mm512_i32gather_epi32(idx, p, 1);
    if (f16) {
      first = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(w));
      second = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(w, 16)));
    } else {
      first = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
      second = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
    }
  }
  // dst[g·ld + j] = src[j·groups + g] as fp32 for j < n, 16-bit floats in rows of `groups` (at
  // most 4) turned into a run per group; writes through n rounded up to W, zeros past n. (One
  // two-source word permute per group and 16 tokens.)
  static void halves_by_group(const uint16_t* src, int64_t n, int64_t groups, bool f16, float* dst, int64_t ld) {
    __m512i idx[4];
    for (int64_t g = 0; g < groups; ++g)
      idx[g] = _mm512_add_epi16(_mm512_set1_epi16(static_cast<short>(g)),
                                _mm512_mullo_epi16(_mm512_set1_epi16(static_cast<short>(groups)),
                                                   _mm512_setr_epi32(0x00010000, 0x00030002, 0x00050004, 0x00070006, 0x00090008,
                                                                     0x000B000A, 0x000D000C, 0x000F000E, 0x00010000, 0x00030002,
                                                                     0x00050004, 0x00070006, 0x00090008, 0x000B000A, 0x000D000C,
                                                                     0x000F000E)));
    for (int64_t j = 0; j < n; j += 16) {
      const int64_t m = std::min<int64_t>(16, n - j) * groups;  // halves of this step, at most 64
      const auto mask = [](int64_t k) { return static_cast<__mmask32>(k >= 32 ? 0xFFFFFFFFu : (1u << k) - 1); };
      const __m512i lo = _mm512_maskz_loadu_epi16(mask(m), src + j * groups);
      const __m512i hi = m > 32 ? _mm512_maskz_loadu_epi16(mask(m - 32), src + j * groups + 32) : _mm512_setzero_si512();
      for (int64_t g = 0; g < groups; ++g) {
        const __m256i h = _mm512_castsi512_si256(_mm512_permutex2var_epi16(lo, idx[g], hi));
        const V f = f16 ? _mm512_cvtph_ps(h) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
        _mm512_storeu_ps(dst + g * ld + j, f);
      }
    }
  }
  // Codes first .. first + W − 1 of BITS bits (2 or 4) packed in 32-bit words (code i of a word in
  // bits [i·BITS, (i + 1)·BITS)), as floats; first a multiple of W. Reads only the words they sit in.
  template <int BITS>
  static V codes(const uint32_t* words, int64_t first) {
    // The shifted word indexes a table of the codes' values (vpermps reads an index's low 4
    // bits: code + 4·next code at 2 bits, the code itself at 4): shift and permute, no mask or
    // conversion.
    if constexpr (BITS == 2) {
      const __m512i w = _mm512_set1_epi32(static_cast<int>(words[first / 16]));
      const __m512i sh = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      const V table = _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
      return _mm512_permutexvar_ps(_mm512_srlv_epi32(w, sh), table);
    } else {
      const uint32_t* p = words + first / 8;
      const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi32(static_cast<int>(p[0]))),
                                           _mm256_set1_epi32(static_cast<int>(p[1])), 1);
      const __m512i sh = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
      const V table = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
      return _mm512_permutexvar_ps(_mm512_srlv_epi32(w, sh), table);
    }
  }
};

}  // namespace attnbench::cpu
