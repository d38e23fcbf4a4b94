// Integer and transcendental helpers for 16-lane AVX-512 kernels (F/BW/VL/DQ) that simd_avx512.h
// does not carry: the natural log, and Philox4x32-10 over 16 counters at once (bit-identical to
// harness/src/rng.cpp). Only translation units built with those flags include it.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace attnbench::cpu {

struct Avx512Math {
  static constexpr int W = 16;
  using V = __m512;

  // ln x to about 1 ulp (Cephes' logf polynomial), with subnormals; log 0 = −inf, log inf = inf.
  static V log(V x) {
    const __mmask16 is_zero = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ);
    const __mmask16 is_inf = _mm512_cmp_ps_mask(x, _mm512_set1_ps(INFINITY), _CMP_EQ_OQ);
    const __mmask16 subnormal = _mm512_cmp_ps_mask(x, _mm512_set1_ps(0x1p-126f), _CMP_LT_OQ);
    x = _mm512_mask_mul_ps(x, subnormal, x, _mm512_set1_ps(0x1p25f));
    const __m512i bits = _mm512_castps_si512(x);
    __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(126));
    e = _mm512_mask_sub_epi32(e, subnormal, e, _mm512_set1_epi32(25));
    V m = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x007FFFFF)), _mm512_set1_epi32(0x3F000000)));
    const __mmask16 small = _mm512_cmp_ps_mask(m, _mm512_set1_ps(0.707106781186547524f), _CMP_LT_OQ);
    e = _mm512_mask_sub_epi32(e, small, e, _mm512_set1_epi32(1));
    m = _mm512_sub_ps(_mm512_mask_add_ps(m, small, m, m), _mm512_set1_ps(1.0f));
    const V fe = _mm512_cvtepi32_ps(e);
    const V z = _mm512_mul_ps(m, m);
    V p = _mm512_set1_ps(7.0376836292E-2f);
    p = _mm512_fmadd_ps(p, m, _mm512_set1_ps(-1.1514610310E-1f));
    p = _mm512_fmadd_ps(p, m, _mm512_set1_ps(1.1676998740E-1f));
    p = _mm512_fmadd_ps(p, m, _mm512_set1_ps(-1.2420140846E-1f));
    p = _mm512_fmadd_ps(p, m, _mm512_set1_ps(1.4249322787E-1f));
    p = _mm512_fmadd_ps(p, m, _mm512_set1_ps(-1.6668057665E-1f));
    p = _mm512_fmadd_ps(p, m, _mm512_set1_ps(2.0000714765E-1f));
    p = _mm512_fmadd_ps(p, m, _mm512_set1_ps(-2.4999993993E-1f));
    p = _mm512_fmadd_ps(p, m, _mm512_set1_ps(3.3333331174E-1f));
    V y = _mm512_mul_ps(_mm512_mul_ps(p, m), z);
    y = _mm512_fmadd_ps(fe, _mm512_set1_ps(-2.12194440e-4f), y);
    y = _mm512_fnmadd_ps(_mm512_set1_ps(0.5f), z, y);
    V r = _mm512_add_ps(m, y);
    r = _mm512_fmadd_ps(fe, _mm512_set1_ps(0.693359375f), r);
    r = _mm512_mask_mov_ps(r, is_zero, _mm512_set1_ps(-INFINITY));
    return _mm512_mask_mov_ps(r, is_inf, _mm512_set1_ps(INFINITY));
  }

  // Words of Philox blocks [block0, block0 + 16) in element order: out[4·i + w] = word w of block i.
  static void philox_blocks(uint32_t k0, uint32_t k1, uint32_t stream, uint32_t domain, uint64_t block0, uint32_t* out) {
    alignas(64) uint32_t lo[16], hi[16];
    for (int i = 0; i < 16; ++i) {
      lo[i] = static_cast<uint32_t>(block0 + i);
      hi[i] = static_cast<uint32_t>((block0 + i) >> 32);
    }
    __m512i c0 = _mm512_load_si512(lo), c1 = _mm512_load_si512(hi);
    __m512i c2 = _mm512_set1_epi32(static_cast<int>(stream)), c3 = _mm512_set1_epi32(static_cast<int>(domain));
    const __m512i m0 = _mm512_set1_epi32(static_cast<int>(0xD2511F53u)), m1 = _mm512_set1_epi32(static_cast<int>(0xCD9E8D57u));
    for (int round = 0; round < 10; ++round) {
      if (round) {
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
      }
      __m512i hi0, lo0, hi1, lo1;
      mul_wide(c0, m0, hi0, lo0);
      mul_wide(c2, m1, hi1, lo1);
      c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32(static_cast<int>(k0)));
      c1 = lo1;
      c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32(static_cast<int>(k1)));
      c3 = lo0;
    }
    // Within each 128-bit group as AVX2 does, then a 4×4 transpose of the groups.
    const __m512i t0 = _mm512_unpacklo_epi32(c0, c1), t1 = _mm512_unpackhi_epi32(c0, c1);
    const __m512i t2 = _mm512_unpacklo_epi32(c2, c3), t3 = _mm512_unpackhi_epi32(c2, c3);
    const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
    const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
    const __m512i a = _mm512_shuffle_i32x4(u0, u1, 0x44), b = _mm512_shuffle_i32x4(u2, u3, 0x44);
    const __m512i c = _mm512_shuffle_i32x4(u0, u1, 0xEE), d = _mm512_shuffle_i32x4(u2, u3, 0xEE);
    _mm512_storeu_si512(out + 0, _mm512_shuffle_i32x4(a, b, 0x88));
    _mm512_storeu_si512(out + 16, _mm512_shuffle_i32x4(a, b, 0xDD));
    _mm512_storeu_si512(out + 32, _mm512_shuffle_i32x4(c, d, 0x88));
    _mm512_storeu_si512(out + 48, _mm512_shuffle_i32x4(c, d, 0xDD));
  }

  // 0, 1, …, 15 as floats.
  static V iota() { return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
  // Where key > best_key: best_key = key, best_index = index.
  static void keep_greater(V key, V index, V& best_key, V& best_index) {
    const __mmask16 gt = _mm512_cmp_ps_mask(key, best_key, _CMP_GT_OQ);
    best_key = _mm512_mask_mov_ps(best_key, gt, key);
    best_index = _mm512_mask_mov_ps(best_index, gt, index);
  }

  static V uniforms(const uint32_t* words) {
    const __m512i w = _mm512_loadu_si512(words);
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(w, 8)), _mm512_set1_ps(0x1p-24f));
  }

 private:
  static void mul_wide(__m512i a, __m512i m, __m512i& hi, __m512i& lo) {
    const __m512i even = _mm512_mul_epu32(a, m);
    const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(m, 32));
    lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
    hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
  }
};

}  // namespace attnbench::cpu
