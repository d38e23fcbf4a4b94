// Integer and transcendental helpers for 8-lane AVX2 kernels that simd_avx2.h does not carry: the
// natural log, and Philox4x32-10 over 8 counters at once (bit-identical to harness/src/rng.cpp).
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace attnbench::cpu {

struct Avx2Math {
  static constexpr int W = 8;
  using V = __m256;

  // ln x to about 1 ulp (Cephes' logf polynomial), with subnormals; log 0 = −inf, log inf = inf.
  static V log(V x) {
    const V zero = _mm256_setzero_ps();
    const V is_zero = _mm256_cmp_ps(x, zero, _CMP_EQ_OQ);
    const V is_inf = _mm256_cmp_ps(x, _mm256_set1_ps(INFINITY), _CMP_EQ_OQ);
    const V subnormal = _mm256_cmp_ps(x, _mm256_set1_ps(0x1p-126f), _CMP_LT_OQ);
    x = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(0x1p25f)), subnormal);
    const __m256i bits = _mm256_castps_si256(x);
    __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126));
    e = _mm256_sub_epi32(e, _mm256_and_si256(_mm256_castps_si256(subnormal), _mm256_set1_epi32(25)));
    V m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007FFFFF)), _mm256_set1_epi32(0x3F000000)));
    // m in [0.5, 1); below √½ use 2m − 1 and one less in the exponent, else m − 1.
    const V small = _mm256_cmp_ps(m, _mm256_set1_ps(0.707106781186547524f), _CMP_LT_OQ);
    e = _mm256_add_epi32(e, _mm256_castps_si256(small));  // −1 where small (all-ones mask)
    m = _mm256_sub_ps(_mm256_add_ps(m, _mm256_and_ps(m, small)), _mm256_set1_ps(1.0f));
    const V fe = _mm256_cvtepi32_ps(e);
    const V z = _mm256_mul_ps(m, m);
    V p = _mm256_set1_ps(7.0376836292E-2f);
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(-1.1514610310E-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(1.1676998740E-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(-1.2420140846E-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(1.4249322787E-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(-1.6668057665E-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(2.0000714765E-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(-2.4999993993E-1f));
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(3.3333331174E-1f));
    V y = _mm256_mul_ps(_mm256_mul_ps(p, m), z);
    y = _mm256_fmadd_ps(fe, _mm256_set1_ps(-2.12194440e-4f), y);
    y = _mm256_fnmadd_ps(_mm256_set1_ps(0.5f), z, y);
    V r = _mm256_add_ps(m, y);
    r = _mm256_fmadd_ps(fe, _mm256_set1_ps(0.693359375f), r);
    r = _mm256_blendv_ps(r, _mm256_set1_ps(-INFINITY), is_zero);
    return _mm256_blendv_ps(r, _mm256_set1_ps(INFINITY), is_inf);
  }

  // Words of Philox blocks [block0, block0 + 8) of (key, stream, domain), in element order:
  // out[4·i + w] = word w of block block0 + i.
  static void philox_blocks(uint32_t k0, uint32_t k1, uint32_t stream, uint32_t domain, uint64_t block0, uint32_t* out) {
    alignas(32) uint32_t lo[8], hi[8];
    for (int i = 0; i < 8; ++i) {
      lo[i] = static_cast<uint32_t>(block0 + i);
      hi[i] = static_cast<uint32_t>((block0 + i) >> 32);
    }
    __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo));
    __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi));
    __m256i c2 = _mm256_set1_epi32(static_cast<int>(stream)), c3 = _mm256_set1_epi32(static_cast<int>(domain));
    const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u)), m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
    for (int round = 0; round < 10; ++round) {
      if (round) {
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
      }
      __m256i hi0, lo0, hi1, lo1;
      mul_wide(c0, m0, hi0, lo0);
      mul_wide(c2, m1, hi1, lo1);
      c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
      c1 = lo1;
      c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
      c3 = lo0;
    }
    // 4×8 transpose: blocks in lanes → words in element order.
    const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
    const __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
    const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    auto* o = reinterpret_cast<__m256i*>(out);
    _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
    _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
    _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
  }

  // 0, 1, …, 7 as floats.
  static V iota() { return _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7); }
  // Where key > best_key: best_key = key, best_index = index.
  static void keep_greater(V key, V index, V& best_key, V& best_index) {
    const V gt = _mm256_cmp_ps(key, best_key, _CMP_GT_OQ);
    best_key = _mm256_blendv_ps(best_key, key, gt);
    best_index = _mm256_blendv_ps(best_index, index, gt);
  }

  // fp32 uniforms (w >> 8)·2^-24 of 8 words.
  static V uniforms(const uint32_t* words) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(w, 8)), _mm256_set1_ps(0x1p-24f));
  }

 private:
  // 32×32 → 64-bit products of every lane, split into high and low words.
  static void mul_wide(__m256i a, __m256i m, __m256i& hi, __m256i& lo) {
    const __m256i even = _mm256_mul_epu32(a, m);
    const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(m, 32));
    lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  }
};

}  // namespace attnbench::cpu
