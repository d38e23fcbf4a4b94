// kivi's quantizer (semantics: reference/kvcomp/kivi.cpp; the operations: kivi_quant.h's
// quantize_group; layout: kivi_common.h), compiled once per ISA (runtime/isa.h). A vector's lanes
// are independent groups:
//   keys    W channels of one token group: lane c's values are the group's G tokens of channel c,
//           read a token row at a time straight from k; its codes go into channel c's words.
//   values  W tokens of one channel group: a block of W token rows is transposed into scratch
//           (fp32) first, so lane t's values are token t's G channels of the group.
// Each lane runs quantize_group's steps in its order as vector operations: the min and max over
// the group's values in order (MINPS and MAXPS keep the running value on ties, as std::min and
// std::max do), fl32(mx − mn), the divide by 2^b − 1, the scale rounded to the dtype (to nearest
// even) and widened back, the flat guard, then per value fl32(x − mn), the divide by the scale, the
// clamp and the rounding; each code is ORed into its word at its shift. Only subtracts and
// divides (IEEE, correctly rounded; nothing a compiler could contract into an FMA), so the codes,
// scales and minima are the reference's bit for bit.

#include "kivi_quant_kernel.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>

#include "../runtime/simd_rows.h"

namespace attnbench::cpu::kivi_quant::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;

// What the quantizer needs beyond the SIMD struct: min, comparisons, selects, roundings and the
// codes' integer packing.
#ifdef __AVX512F__
using I = __m512i;
using M = __mmask16;
inline V vmin(V a, V b) { return _mm512_min_ps(a, b); }
inline M eq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
inline M ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
inline M either(M a, M b) { return static_cast<M>(a | b); }
inline V select(M m, V yes, V no) { return _mm512_mask_blend_ps(m, no, yes); }
inline V round_even(V x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline V round_zero(V x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
inline I to_int(V x) { return _mm512_cvttps_epi32(x); }
inline I izero() { return _mm512_setzero_si512(); }
inline I shl_or(I acc, I x, int shift) { return _mm512_or_si512(acc, _mm512_sll_epi32(x, _mm_cvtsi32_si128(shift))); }
inline void store_int(uint32_t* p, I x) { _mm512_storeu_si512(p, x); }
#else
using I = __m256i;
using M = __m256;
inline V vmin(V a, V b) { return _mm256_min_ps(a, b); }
inline M eq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
inline M ge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
inline M either(M a, M b) { return _mm256_or_ps(a, b); }
inline V select(M m, V yes, V no) { return _mm256_blendv_ps(no, yes, m); }
inline V round_even(V x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline V round_zero(V x) { return _mm256_round_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
inline I to_int(V x) { return _mm256_cvttps_epi32(x); }
inline I izero() { return _mm256_setzero_si256(); }
inline I shl_or(I acc, I x, int shift) { return _mm256_or_si256(acc, _mm256_sll_epi32(x, _mm_cvtsi32_si128(shift))); }
inline void store_int(uint32_t* p, I x) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), x); }
#endif

inline V load16(const uint16_t* p, bool f16) { return f16 ? S::load_f16(p) : S::load_bf16(p); }
inline void store16(uint16_t* p, V v, bool f16) { f16 ? S::store_f16(p, v) : S::store_bf16(p, v); }
inline uint16_t nan16(bool f16) { return f16 ? 0x7E00 : 0x7FC0; }  // the reference's NaN (dtype.cpp)

// Every line of [p, p + bytes) asked for.
inline void prefetch_lines(const void* p, int64_t bytes) {
  for (int64_t x = 0; x < bytes; x += 64) _mm_prefetch(static_cast<const char*>(p) + x, _MM_HINT_T0);
}

// What a vector of groups stores for its lanes: the scale and the min, dtype bits.
struct GroupBits {
  alignas(64) uint16_t scale[W];
  alignas(64) uint16_t min[W];
};

// The W lanes' groups of n values (BITS-bit codes), value i of every lane in row(i); emit(w, words)
// takes word w of every lane (words[lane]) once its 32 / BITS codes are in.
template <int BITS, typename Row, typename Emit>
inline void quantize_lanes(const kvcomp::KiviParams& s, bool f16, int64_t n, const Row& row, const Emit& emit, GroupBits& out) {
  constexpr int kPerWord = 32 / BITS;
  V mn = row(0), mx = mn;
  for (int64_t i = 1; i < n; ++i) {
    const V x = row(i);
    mn = vmin(x, mn);    // x < mn ? x : mn, std::min(mn, x)
    mx = S::max(x, mx);  // x > mx ? x : mx, std::max(mx, x)
  }
  const V top = S::set1(static_cast<float>((1u << BITS) - 1u)), zero = S::zero();
  store16(out.scale, S::div(S::sub(mx, mn), top), f16);  // the scale to the dtype, to nearest even
  const V rounded = load16(out.scale, f16);
  const M flat = either(eq(mx, mn), eq(rounded, zero));
  const V scale = select(flat, S::set1(1.0f), rounded);
  store16(out.scale, scale, f16);
  store16(out.min, mn, f16);  // exact: the min is one of the values
  alignas(64) uint32_t words[W];
  I acc = izero();
  for (int64_t i = 0; i < n; ++i) {
    V c = S::div(S::sub(row(i), mn), scale);
    c = vmin(S::max(c, zero), top);  // std::clamp(c, 0, top): c is never NaN
    c = select(flat, zero, c);
    if (s.half_away) {  // c ≥ 0: its integer part, plus one from a fraction of a half up (exact)
      const V t = round_zero(c);
      c = select(ge(S::sub(c, t), S::set1(0.5f)), S::add(t, S::set1(1.0f)), t);
    } else {
      c = round_even(c);
    }
    const int at = static_cast<int>(i) % kPerWord;
    acc = shl_or(acc, to_int(c), at * BITS);
    if (at == kPerWord - 1) {
      store_int(words, acc);
      emit(i / kPerWord, words);
      acc = izero();
    }
  }
}

template <int BITS>
void keys_bits(const Problem& p, int64_t bh, int64_t len, int64_t g0, int64_t g1) {
  const kvcomp::KiviParams& s = p.s;
  const bool f16 = p.dtype == DType::f16;
  constexpr int64_t F = 32 / BITS;
  const int64_t D = s.head_dim, G = s.group_size, T = s.kv_cap;
  const int64_t groups = kvcomp::kivi_k_quant(s, len) / G, kw = kvcomp::kivi_k_words(s), kg = kvcomp::kivi_k_groups(s);
  auto* scales = static_cast<uint16_t*>(p.k_scale);
  auto* mins = static_cast<uint16_t*>(p.k_min);
  GroupBits out;
  for (int64_t g = g0; g < g1; ++g) {
    if (g >= groups) {  // past the quantized keys: the layout's padding
      for (int64_t c = 0; c < D; ++c) {
        std::fill_n(p.k_codes + (bh * D + c) * kw + g * G / F, G / F, 0u);
        scales[(bh * D + c) * kg + g] = mins[(bh * D + c) * kg + g] = nan16(f16);
      }
      continue;
    }
    const uint16_t* rows = static_cast<const uint16_t*>(p.k) + (bh * T + g * G) * D;
    // The group's G rows are read a column of W channels at a time, which the hardware prefetcher
    // does not follow: the next group's lines are asked for now.
    if (g + 1 < groups) prefetch_lines(rows + G * D, G * D * 2);
    for (int64_t c0 = 0; c0 < D; c0 += W) {
      const auto row = [&](int64_t i) { return load16(rows + i * D + c0, f16); };
      const auto emit = [&](int64_t w, const uint32_t* words) {
        for (int l = 0; l < W; ++l) p.k_codes[(bh * D + c0 + l) * kw + g * G / F + w] = words[l];
      };
      quantize_lanes<BITS>(s, f16, G, row, emit, out);
      for (int l = 0; l < W; ++l) {
        scales[(bh * D + c0 + l) * kg + g] = out.scale[l];
        mins[(bh * D + c0 + l) * kg + g] = out.min[l];
      }
    }
  }
}

template <int BITS>
void values_bits(const Problem& p, int64_t bh, int64_t len, int64_t t0, int64_t t1, float* tile) {
  const kvcomp::KiviParams& s = p.s;
  const bool f16 = p.dtype == DType::f16;
  constexpr int64_t F = 32 / BITS;
  const int64_t D = s.head_dim, G = s.group_size, T = s.kv_cap, cap = s.v_quant_cap;
  const int64_t quantized = kvcomp::kivi_v_quant(s, len), vw = kvcomp::kivi_v_words(s), vg = kvcomp::kivi_v_groups(s);
  auto* scales = static_cast<uint16_t*>(p.v_scale);
  auto* mins = static_cast<uint16_t*>(p.v_min);
  float* row_f32 = tile + W * D;
  GroupBits out;
  for (int64_t tb = t0; tb < t1; tb += W) {
    const int64_t lanes = std::min<int64_t>(W, t1 - tb), live = std::clamp<int64_t>(quantized - tb, 0, lanes);
    if (live > 0) {
      // Lane l: token tb + l, its channels down the tile (tile[c·W + l]); lanes past the quantized
      // tokens hold zeros (a flat group) and are not stored.
      for (int64_t l = 0; l < W; ++l) {
        if (l < live) row_to_f32<S>(static_cast<const uint16_t*>(p.v) + (bh * T + tb + l) * D, p.dtype, D, D, row_f32);
        else std::fill_n(row_f32, D, 0.0f);
        for (int64_t c = 0; c < D; ++c) tile[c * W + l] = row_f32[c];
      }
      for (int64_t gv = 0; gv < vg; ++gv) {
        const auto row = [&](int64_t i) { return S::load(tile + (gv * G + i) * W); };
        const auto emit = [&](int64_t w, const uint32_t* words) {
          for (int64_t l = 0; l < live; ++l) p.v_codes[(bh * cap + tb + l) * vw + gv * G / F + w] = words[l];
        };
        quantize_lanes<BITS>(s, f16, G, row, emit, out);
        for (int64_t l = 0; l < live; ++l) {
          scales[(bh * cap + tb + l) * vg + gv] = out.scale[l];
          mins[(bh * cap + tb + l) * vg + gv] = out.min[l];
        }
      }
    }
    for (int64_t l = live; l < lanes; ++l) {  // past the quantized tokens: the layout's padding
      std::fill_n(p.v_codes + (bh * cap + tb + l) * vw, vw, 0u);
      std::fill_n(scales + (bh * cap + tb + l) * vg, vg, nan16(f16));
      std::fill_n(mins + (bh * cap + tb + l) * vg, vg, nan16(f16));
    }
  }
}

void keys(const Problem& p, int64_t bh, int64_t len, int64_t g0, int64_t g1) {
  if (p.s.bits == 2) keys_bits<2>(p, bh, len, g0, g1);
  else keys_bits<4>(p, bh, len, g0, g1);
}

void values(const Problem& p, int64_t bh, int64_t len, int64_t t0, int64_t t1, float* tile) {
  if (p.s.bits == 2) values_bits<2>(p, bh, len, t0, t1, tile);
  else values_bits<4>(p, bh, len, t0, t1, tile);
}

}  // namespace attnbench::cpu::kivi_quant::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const kivi_quant::Kernels& isa_kernels<kivi_quant::Kernels, Isa::ATTNBENCH_ISA>() {
  static const kivi_quant::Kernels table{&kivi_quant::ATTNBENCH_ISA::keys, &kivi_quant::ATTNBENCH_ISA::values};
  return table;
}
}  // namespace attnbench::cpu
