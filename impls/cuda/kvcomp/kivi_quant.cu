// kivi's quantizer on CUDA (kivi_quant_launch.h; semantics: reference/kvcomp/kivi.cpp; the
// operations: kivi_quant.h's quantize_group; layout: kivi_common.h). One thread per item:
//   key group    a channel's G tokens (channels innermost: a warp reads 32 consecutive channels of
//                each token row, 64 contiguous bytes); its G / per_word words, scale and min, or
//                the layout's padding past the sequence's quantized keys (codes 0, NaN).
//   value group  a token's G channels (G·2 contiguous bytes); likewise past the quantized tokens.
//   window row   a row of k_full or v_full (the token's, or NaN past the window), and the split's
//                lengths (k_quant_groups with k_full's row 0, the per-head counts with it too).
// A group is quantize_group's steps in its order: min and max in order (the running value kept on
// ties), fl32(mx − mn) / (2^b − 1), the scale rounded to the dtype to nearest even
// (__float2half_rn, __float2bfloat16_rn) and widened exactly, the flat guard, then per value
// fl32(x − mn) / scale, the clamp and the rounding (rintf: to nearest even; or half away: the
// integer part plus one from a fraction of a half up). Subtracts and divides are __fsub_rn and
// __fdiv_rn: IEEE, correctly rounded, never contracted or approximated whatever the flags. The
// codes are the reference's bit for bit. Bound by reading k and v and writing the cache; no shared
// memory, no synchronisation.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kivi_quant_launch.h"
#include "runtime/launch.cuh"

namespace attnbench::cuda::kivi_quant {
namespace {

#ifdef ATTNBENCH_CUDA_EMULATION
// The emulated device (g++): IEEE subtract and divide; nothing here can contract into an FMA.
__device__ __forceinline__ float sub_rn(float a, float b) { return a - b; }
__device__ __forceinline__ float div_rn(float a, float b) { return a / b; }
#else
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
#endif

template <Elem E>
__device__ __forceinline__ uint16_t nan16() { return E == Elem::bf16 ? 0x7fc0 : 0x7e00; }  // the reference's NaN

template <Elem E>
__device__ __forceinline__ float widen(uint16_t h) {
  if constexpr (E == Elem::bf16) return __uint_as_float(static_cast<uint32_t>(h) << 16);
  else return __half2float(__ushort_as_half(h));
}

// fp32 to the dtype's bits, to nearest even.
template <Elem E>
__device__ __forceinline__ uint16_t narrow(float x) {
  if constexpr (E == Elem::bf16) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  else return __half_as_ushort(__float2half_rn(x));
}

template <Elem E>
__device__ __forceinline__ float load(const void* base, int64_t i) {
  return widen<E>(__ldg(static_cast<const unsigned short*>(base) + i));
}

// One group of G values at base, base + stride, …: its words from words[0], its scale and min.
template <Elem E, int BITS>
__device__ __forceinline__ void quantize(const kvcomp::KiviParams& s, const void* x, int64_t base, int64_t stride,
                                         uint32_t* words, uint16_t* scale_out, uint16_t* min_out) {
  constexpr int kPerWord = 32 / BITS;
  constexpr float kTop = static_cast<float>((1u << BITS) - 1u);
  const int G = s.group_size;
  float mn = load<E>(x, base), mx = mn;
  for (int i = 1; i < G; ++i) {
    const float v = load<E>(x, base + i * stride);
    mn = v < mn ? v : mn;  // std::min(mn, v)
    mx = mx < v ? v : mx;  // std::max(mx, v)
  }
  const uint16_t scale_bits = narrow<E>(div_rn(sub_rn(mx, mn), kTop));
  const float rounded = widen<E>(scale_bits);
  const bool flat = mx == mn || rounded == 0.0f;
  const float scale = flat ? 1.0f : rounded;
  *scale_out = flat ? narrow<E>(1.0f) : scale_bits;
  *min_out = narrow<E>(mn);  // exact: the min is one of the values
  uint32_t word = 0;
  for (int i = 0; i < G; ++i) {
    float c = div_rn(sub_rn(load<E>(x, base + i * stride), mn), scale);
    c = fminf(fmaxf(c, 0.0f), kTop);  // std::clamp(c, 0, top): c is never NaN
    uint32_t code = 0;
    if (!flat) {
      if (s.half_away) {
        const float whole = floorf(c);
        code = static_cast<uint32_t>(whole) + (sub_rn(c, whole) >= 0.5f ? 1u : 0u);
      } else {
        code = static_cast<uint32_t>(rintf(c));
      }
    }
    word |= code << ((i % kPerWord) * BITS);
    if (i % kPerWord == kPerWord - 1) {
      words[i / kPerWord] = word;
      word = 0;
    }
  }
}

// Sequence b's length, within [0, kv_cap].
__device__ __forceinline__ int64_t sequence_length(const Args& a, int64_t b) {
  const int64_t n = a.kv_len[b];
  return n < 0 ? 0 : n > a.s.kv_cap ? a.s.kv_cap : n;
}

template <Elem E, int BITS>
__global__ void __launch_bounds__(kThreads) quant_kernel(const Args a) {
  const int64_t item = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (item >= a.items) return;
  const kvcomp::KiviParams& s = a.s;
  const int64_t H = s.kv_heads, D = s.head_dim, G = s.group_size, T = s.kv_cap, R = s.residual, F = 32 / BITS;
  const int64_t k_groups = kvcomp::kivi_k_groups(s), k_words = kvcomp::kivi_k_words(s);
  const int64_t v_cap = s.v_quant_cap, v_groups = kvcomp::kivi_v_groups(s), v_words = kvcomp::kivi_v_words(s);
  auto* k_scale = static_cast<uint16_t*>(a.k_scale);
  auto* k_min = static_cast<uint16_t*>(a.k_min);
  auto* v_scale = static_cast<uint16_t*>(a.v_scale);
  auto* v_min = static_cast<uint16_t*>(a.v_min);
  if (item < a.key_items) {
    const int64_t c = item % D, g = (item / D) % k_groups, bh = item / (D * k_groups);
    const int64_t len = sequence_length(a, bh / H);
    const int64_t word0 = (bh * D + c) * k_words + g * (G / F), at = (bh * D + c) * k_groups + g;
    if (g * G >= kvcomp::kivi_k_quant(s, len)) {  // past the quantized keys: the layout's padding
      for (int64_t w = 0; w < G / F; ++w) a.k_codes[word0 + w] = 0;
      k_scale[at] = k_min[at] = nan16<E>();
      return;
    }
    quantize<E, BITS>(s, a.k, (bh * T + g * G) * D + c, D, a.k_codes + word0, k_scale + at, k_min + at);
  } else if (item < a.key_items + a.value_items) {
    const int64_t i = item - a.key_items;
    const int64_t gv = i % v_groups, t = (i / v_groups) % v_cap, bh = i / (v_groups * v_cap);
    const int64_t len = sequence_length(a, bh / H);
    const int64_t word0 = (bh * v_cap + t) * v_words + gv * (G / F), at = (bh * v_cap + t) * v_groups + gv;
    if (t >= kvcomp::kivi_v_quant(s, len)) {  // past the quantized tokens: the layout's padding
      for (int64_t w = 0; w < G / F; ++w) a.v_codes[word0 + w] = 0;
      v_scale[at] = v_min[at] = nan16<E>();
      return;
    }
    quantize<E, BITS>(s, a.v, (bh * T + t) * D + gv * G, 1, a.v_codes + word0, v_scale + at, v_min + at);
  } else {
    const int64_t i = item - a.key_items - a.value_items, row = i % (2 * R + 1), bh = i / (2 * R + 1);
    const int64_t len = sequence_length(a, bh / H);
    const int64_t k_full_n = kvcomp::kivi_k_full(s, len), v_full_n = kvcomp::kivi_v_full(s, len);
    const int64_t k_quant = len - k_full_n, v_quant = len - v_full_n;
    const auto* k = static_cast<const uint16_t*>(a.k);
    const auto* v = static_cast<const uint16_t*>(a.v);
    if (row < R) {
      uint16_t* out = static_cast<uint16_t*>(a.k_full) + (bh * R + row) * D;
      for (int64_t x = 0; x < D; ++x) out[x] = row < k_full_n ? k[(bh * T + k_quant + row) * D + x] : nan16<E>();
    } else {
      const int64_t r = row - R;
      uint16_t* out = static_cast<uint16_t*>(a.v_full) + (bh * (R + 1) + r) * D;
      for (int64_t x = 0; x < D; ++x) out[x] = r < v_full_n ? v[(bh * T + v_quant + r) * D + x] : nan16<E>();
    }
    if (row == 0) {
      for (int64_t x = 0; x < D; ++x) a.k_quant_groups[bh * D + x] = static_cast<int32_t>(k_quant / G);
      a.k_full_len[bh] = static_cast<int32_t>(k_full_n);
      a.v_quant_len[bh] = static_cast<int32_t>(v_quant);
      a.v_full_len[bh] = static_cast<int32_t>(v_full_n);
    }
  }
}

template <Elem E, int BITS>
cudaError_t launch(const Args& a, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((a.items + kThreads - 1) / kThreads);
  return launch_kernel(quant_kernel<E, BITS>, dim3(blocks), dim3(kThreads), 0, stream, a);
}

}  // namespace

cudaError_t quant_launch(Elem e, const Args& a, cudaStream_t stream) {
  if (a.items == 0) return cudaSuccess;
  if (e == Elem::f16) return a.s.bits == 2 ? launch<Elem::f16, 2>(a, stream) : launch<Elem::f16, 4>(a, stream);
  if (e == Elem::bf16) return a.s.bits == 2 ? launch<Elem::bf16, 2>(a, stream) : launch<Elem::bf16, 4>(a, stream);
  return cudaErrorInvalidValue;
}

}  // namespace attnbench::cuda::kivi_quant
