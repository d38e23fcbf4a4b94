// kivi_decode's fused decode kernel on CUDA (semantics: reference/kvcomp/kivi_decode.cpp; layout:
// reference/kvcomp/kivi_common.h; interface: kivi_decode_launch.h), instantiated per element type
// and code width in the build folder (kvcomp/instances.cmake). One decode step of attention
// straight from KIVI's packed cache: the codes are unpacked and dequantized in registers, no
// dequantized copy exists anywhere.
//
// Work split (flash-decoding). A CTA of kWarps = 4 warps owns one (sequence b, KV head g), a block
// of g's GQA query rows (the whole group when it has at most 8 rows — 4 when head_dim > 128 — so
// every code is read once per KV head), in a row tile of ROWS ∈ {1, 2, 4, 8}, and one split of the
// sequence's keys. The grid is (row blocks × splits, kv_heads, batch), row blocks innermost so the
// CTAs reading the same codes run together. The splits share the sequence's own length evenly in
// whole warp tiles (a ragged sequence gets short splits); the host splits the keys only when the
// (sequence, KV head, block) CTAs are too few to fill the 132 SMs, and then each CTA writes a
// partial (m, l, unnormalised O) per row that kivi_decode.cu's combine merges. Inside the CTA the
// warps take the split's warp tiles of TILE = 32·P keys in turn, each warp with its own online
// softmax (no CTA barrier in the key loop); at the end the warps' (m, l, O) are merged in shared
// memory in a fixed order. Per warp tile:
//   scores  lanes over keys: lane i takes keys t0 = tile + i·P .. t0 + P − 1, P = 32/ROWS within
//           [4, 16] (16, 16, 8, 4), so the lane's ROWS·P scores are 32 registers. Keys are
//           channel-major, so for each channel the lane reads the P·bits bits of one 32-bit word
//           that hold its codes (two words as one 64-bit load at 4 bits with P = 16), and the warp
//           reads 32 to 256 contiguous bytes per channel. P divides a group's G ≥ 16 keys, so one
//           scale and one min serve the lane's keys: per channel and row it forms
//           a = (scale·q_r[c])·kscale[c, g] and the min term (scale·q_r[c])·kmin[c, g] once, then
//           one FMA a·code per key. Codes are unpacked with a mask and an OR into the mantissa of
//           2^(23 − k), that power then subtracted (exact; no integer conversions, which run at a
//           quarter of the FMA rate). Channels go 2 or 4 a step, their words and scales loaded
//           first, scale·q from shared memory as one vector per row. k_quant is a multiple of G,
//           so a lane's keys are all quantized or all in the full-precision window, whose k_full
//           rows the lane reads with 16-byte loads.
//   softmax each row's tile max over the warp (shuffles), the running max and the rescale of the
//           lane's l and O, p = exp(s − m) into the warp's shared tile [TILE][ROWS].
//   values  lanes over channels: D/8 lanes cover 8-channel chunks of a token's row (one word of
//           4-bit codes, half a word of 2-bit ones, inside one scale group) for 4 rows (two such
//           lane sets at ROWS = 8, each unpacking the codes for its 4 rows, so a lane holds 32
//           accumulators), and the warp's lane groups take the tile's tokens in turn:
//           p·(code·vscale + vmin) = (p·vscale)·code + p·vmin, so per token and row one multiply,
//           8 FMAs into the lane's O and one FMA into its Σ p·vmin, which joins O at the end of
//           the tile. Tokens past v_quant read their v_full row's 16 bytes instead.
// Everything is fp32, expf and logf accurate; O and LSE are summed in a fixed order, so a rerun
// gives the same bits. Every load is guarded by the sequence's counts (k_quant, v_quant, its
// length): past them the scales, minima and full-precision rows are NaN.
// Registers (sm_90a, ptxas): about 165 at 4 and 8 rows (3 CTAs of 128 threads an SM: launch
// bounds hold them there), 128 at 2 rows, under 120 at 1; no spills, no local memory.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kivi_decode_launch.h"
#include "runtime/device_math.cuh"
#include "runtime/launch.cuh"

namespace attnbench::cuda::kivi {
namespace {

// A 16-bit element in the low half of h, as fp32.
template <Elem E>
__device__ __forceinline__ float f32_of(uint32_t h) {
  if constexpr (E == Elem::bf16) return __uint_as_float(h << 16);
  else return __half2float(__ushort_as_half(static_cast<unsigned short>(h)));
}

template <Elem E>
__device__ __forceinline__ float load_elem(const void* base, int64_t i) {
  return f32_of<E>(__ldg(static_cast<const unsigned short*>(base) + i));
}

template <Elem E>
__device__ __forceinline__ void store_elem(void* base, int64_t i, float v) {
  if constexpr (E == Elem::bf16) static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v);
  else static_cast<__half*>(base)[i] = __float2half_rn(v);
}

// Elements i .. i + 7 (i a multiple of 8, rows 16-byte aligned) as fp32: one 16-byte load.
template <Elem E>
__device__ __forceinline__ void load8(const void* base, int64_t i, float (&out)[8]) {
  const uint4 w = __ldg(reinterpret_cast<const uint4*>(static_cast<const unsigned short*>(base) + i));
  const uint32_t x[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (E == Elem::bf16) {
      out[2 * k] = __uint_as_float(x[k] << 16);
      out[2 * k + 1] = __uint_as_float(x[k] & 0xffff0000u);
    } else {
      out[2 * k] = f32_of<E>(x[k] & 0xffffu);
      out[2 * k + 1] = f32_of<E>(x[k] >> 16);
    }
  }
}

// The COUNT codes in bits [0, COUNT·BITS) of w (higher bits ignored; COUNT·BITS ≤ 16) as exact
// floats, into out[at .. at + COUNT): the code at bit k goes into the mantissa of 2^(23 − k), where its unit
// is 1 (k + BITS ≤ 16 < 23), and 2^(23 − k) is subtracted: a LOP3 and an FADD per code.
template <int BITS, int N, int COUNT = 16 / BITS>
__device__ __forceinline__ void codes16(uint32_t w, float (&out)[N], int at) {
  constexpr uint32_t kMask = (1u << BITS) - 1u;
  static_assert(COUNT * BITS <= 16, "codes16: 16 bits at most");
#pragma unroll
  for (int k = 0; k < COUNT; ++k) {
    const uint32_t magic = (127u + 23u - static_cast<uint32_t>(k * BITS)) << 23;
    out[at + k] = __uint_as_float((w & (kMask << (k * BITS))) | magic) - __uint_as_float(magic);
  }
}

// ROWS consecutive floats of shared memory (16-byte aligned when ROWS ≥ 4, 8 when 2).
template <int ROWS>
__device__ __forceinline__ void load_rows(const float* src, float (&v)[ROWS]) {
  if constexpr (ROWS % 4 == 0) {
#pragma unroll
    for (int r = 0; r < ROWS; r += 4) {
      const float4 x = *reinterpret_cast<const float4*>(src + r);
      v[r] = x.x, v[r + 1] = x.y, v[r + 2] = x.z, v[r + 3] = x.w;
    }
  } else if constexpr (ROWS == 2) {
    const float2 x = *reinterpret_cast<const float2*>(src);
    v[0] = x.x, v[1] = x.y;
  } else {
    v[0] = src[0];
  }
}
template <int ROWS>
__device__ __forceinline__ void store_rows(float* dst, const float (&v)[ROWS]) {
  if constexpr (ROWS % 4 == 0) {
#pragma unroll
    for (int r = 0; r < ROWS; r += 4) *reinterpret_cast<float4*>(dst + r) = make_float4(v[r], v[r + 1], v[r + 2], v[r + 3]);
  } else if constexpr (ROWS == 2) {
    *reinterpret_cast<float2*>(dst) = make_float2(v[0], v[1]);
  } else {
    dst[0] = v[0];
  }
}

// Row rh·VR + r of a per-row array: RH ≤ 2 compile-time candidates (no local-memory indexing).
template <int VR, int RH>
__device__ __forceinline__ float row_of(const float (&v)[VR * RH], int rh, int r) {
  float x = v[r];
#pragma unroll
  for (int h = 1; h < RH; ++h)
    if (rh == h) x = v[h * VR + r];
  return x;
}

// Scores of the lane's P quantized keys from t0 (< k_quant, a multiple of P) for every row:
// s[r][j] = Σ_c a_r[c]·code_c(t0 + j) + Σ_c q_r[c]·kmin[c, g], a_r[c] = q_r[c]·kscale[c, g], q
// already scaled. CS channels a step: their words and scales loaded first, then their q from
// shared memory as one vector per row.
template <Elem E, int BITS, int ROWS, int P>
__device__ __forceinline__ void quantized_scores(const Args& a, int64_t bh, int t0, const float* qs, float (&s)[ROWS][P]) {
  constexpr int kPerWord = 32 / BITS;
  constexpr int kWords = (P * BITS + 31) / 32;                       // words of the lane's codes per channel: 1 or 2
  constexpr int kPieceBits = P * BITS < 16 ? P * BITS : 16;           // unpacked a piece of at most 16 bits at a time
  constexpr int kPieces = P * BITS / kPieceBits, kPerPiece = kPieceBits / BITS;
  constexpr int CS = ROWS <= 4 ? 4 : 2;                               // channels a step
  const int D = a.s.head_dim;
  const int k_words = a.s.k_quant_cap / kPerWord, k_groups = a.s.k_quant_cap / a.s.group_size;
  const uint32_t* words = a.k_codes + bh * D * k_words + t0 / kPerWord;
  const unsigned short* scales = static_cast<const unsigned short*>(a.k_scale) + bh * D * k_groups + t0 / a.s.group_size;
  const unsigned short* mins = static_cast<const unsigned short*>(a.k_min) + bh * D * k_groups + t0 / a.s.group_size;
  const int shift = P * BITS < 32 ? (t0 % kPerWord) * BITS : 0;  // the lane's first code in its word
  float mt[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    mt[r] = 0.0f;
#pragma unroll
    for (int j = 0; j < P; ++j) s[r][j] = 0.0f;
  }
#pragma unroll 2
  for (int c = 0; c < D; c += CS) {
    uint32_t w[CS][kWords];
    float ksc[CS], kmn[CS];
#pragma unroll
    for (int e = 0; e < CS; ++e) {
      const int64_t ch = c + e;
      if constexpr (kWords == 2) {
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(words + ch * k_words));
        w[e][0] = v.x;
        w[e][1] = v.y;
      } else {
        w[e][0] = __ldg(words + ch * k_words);
      }
      ksc[e] = f32_of<E>(__ldg(scales + ch * k_groups));
      kmn[e] = f32_of<E>(__ldg(mins + ch * k_groups));
    }
    float q[ROWS][CS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      if constexpr (CS == 4) {
        const float4 x = *reinterpret_cast<const float4*>(qs + r * D + c);
        q[r][0] = x.x, q[r][1] = x.y, q[r][2] = x.z, q[r][3] = x.w;
      } else {
        const float2 x = *reinterpret_cast<const float2*>(qs + r * D + c);
        q[r][0] = x.x, q[r][1] = x.y;
      }
    }
#pragma unroll
    for (int e = 0; e < CS; ++e) {
      float code[P];
#pragma unroll
      for (int piece = 0; piece < kPieces; ++piece)
        codes16<BITS, P, kPerPiece>(kWords == 1 ? w[e][0] >> (shift + 16 * piece) : w[e][piece / 2] >> (16 * (piece % 2)), code,
                                    piece * kPerPiece);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float av = q[r][e] * ksc[e];
        mt[r] = fmaf(q[r][e], kmn[e], mt[r]);
#pragma unroll
        for (int j = 0; j < P; ++j) s[r][j] = fmaf(av, code[j], s[r][j]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int j = 0; j < P; ++j) s[r][j] += mt[r];
}

// Scores of the lane's keys t0 .. t0 + P − 1 below `end` in the full-precision window (t0 ≥
// k_quant): dot products with their k_full rows, 16 bytes at a time.
template <Elem E, int ROWS, int P>
__device__ __forceinline__ void window_scores(const Args& a, int64_t bh, int t0, int k_quant, int end, const float* qs,
                                              float (&s)[ROWS][P]) {
  const int D = a.s.head_dim;
#pragma unroll
  for (int j = 0; j < P; ++j) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r) s[r][j] = 0.0f;
    if (t0 + j >= end) continue;
    const int64_t row = (bh * a.s.residual + (t0 + j - k_quant)) * D;
    for (int c = 0; c < D; c += 8) {
      float k[8];
      load8<E>(a.k_full, row + c, k);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float4 lo = *reinterpret_cast<const float4*>(qs + r * D + c);
        const float4 hi = *reinterpret_cast<const float4*>(qs + r * D + c + 4);
        float d = s[r][j];
        d = fmaf(lo.x, k[0], d);
        d = fmaf(lo.y, k[1], d);
        d = fmaf(lo.z, k[2], d);
        d = fmaf(lo.w, k[3], d);
        d = fmaf(hi.x, k[4], d);
        d = fmaf(hi.y, k[5], d);
        d = fmaf(hi.z, k[6], d);
        d = fmaf(hi.w, k[7], d);
        s[r][j] = d;
      }
    }
  }
}

template <Elem E, int BITS, int ROWS>
__global__ void __launch_bounds__(kThreads, ROWS >= 4 ? 3 : 4) decode_kernel(const Args a) {
  constexpr int P = keys_per_lane(ROWS), TILE = warp_tile(ROWS);
  constexpr int VR = ROWS < 4 ? ROWS : 4, RH = ROWS / VR;  // the value phase's rows per lane, and lanes per (token, channels)
  constexpr int kPerWord = 32 / BITS;
  // A warp's shared tile holds the tile's p [TILE][ROWS], and at the end its lane groups' O
  // partials [NG][ROWS][D], NG·D ≤ 32·8.
  constexpr int kSlice = (TILE > 32 * 8 ? TILE : 32 * 8) * ROWS;
  static_assert(kMaxHeadDim / 8 <= 32, "a lane group covers a row");
  __shared__ float4 q_sh[ROWS * kMaxHeadDim / 4];  // scale·q of the block's rows, [ROWS][D]
  __shared__ float4 p_sh[kWarps][kSlice / 4];
  __shared__ float stat_sh[kWarps][2][ROWS];        // per warp: m and l of each row

  const kvcomp::KiviParams& s = a.s;
  const int D = s.head_dim;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int rb = static_cast<int>(blockIdx.x) % a.row_blocks, split = static_cast<int>(blockIdx.x) / a.row_blocks;
  const int g = blockIdx.y, b = blockIdx.z;
  const int64_t bh = static_cast<int64_t>(b) * s.kv_heads + g;
  const int len = min(max(a.kv_len[b], 0), s.kv_cap);
  const int k_quant = static_cast<int>(kvcomp::kivi_k_quant(s, len)), v_quant = static_cast<int>(kvcomp::kivi_v_quant(s, len));
  // This split's keys [begin, end): the sequence's length shared evenly in whole warp tiles.
  const int per_split = ((len + a.splits - 1) / a.splits + TILE - 1) / TILE * TILE;
  const int begin = split * per_split, end = min(len, begin + per_split);
  const int row0 = rb * a.rows, nrows = min(a.rows, s.group - row0);
  const int64_t orow0 = static_cast<int64_t>(b) * s.q_heads + static_cast<int64_t>(g) * s.group + row0;

  float* qs = reinterpret_cast<float*>(q_sh);
  for (int i = threadIdx.x; i < ROWS * D; i += kThreads) {
    const int r = i / D;
    qs[i] = r < nrows ? s.scale * load_elem<E>(a.q, (orow0 + r) * D + (i - r * D)) : 0.0f;
  }
  __syncthreads();

  // The value phase's place: channels 8·vch .. 8·vch + 7 of rows rh·VR .. rh·VR + VR − 1 of the
  // tokens vgrp, vgrp + NG, ... (NC·RH lanes cover a token: the host keeps NC·RH ≤ 32).
  const int NC = D / 8, NG = 32 / (NC * RH);
  const int vch = lane % NC, rh = RH == 1 ? 0 : lane / NC % RH, vgrp = lane / (NC * RH);
  const bool v_lane = vgrp < NG;
  const int v_words = D / kPerWord, v_groups = D / s.group_size;
  const int v_shift = BITS == 2 ? 16 * (vch & 1) : 0;  // 2 bits: 8 channels are half a word

  float* pw = reinterpret_cast<float*>(p_sh[warp]);
  float m[ROWS], l[ROWS], acc[VR][8];  // acc: rows rh·VR + r
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    m[r] = neg_inf();
    l[r] = 0.0f;
  }
#pragma unroll
  for (int r = 0; r < VR; ++r)
#pragma unroll
    for (int x = 0; x < 8; ++x) acc[r][x] = 0.0f;

  for (int tile = begin + warp * TILE; tile < end; tile += kWarps * TILE) {
    // --- scores of keys t0 .. t0 + P − 1
    const int t0 = tile + lane * P;
    float sc[ROWS][P];
    if (t0 < k_quant) {
      quantized_scores<E, BITS, ROWS, P>(a, bh, t0, qs, sc);
    } else {
      window_scores<E, ROWS, P>(a, bh, t0, k_quant, end, qs, sc);  // all −inf below when t0 ≥ end
    }

    // --- online softmax: the tile holds key `tile` < end, so every row's tile max is finite
    float alpha[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      float mx = neg_inf();
#pragma unroll
      for (int j = 0; j < P; ++j) {
        if (t0 + j >= end) sc[r][j] = neg_inf();
        mx = fmaxf(mx, sc[r][j]);
      }
      const float m_new = fmaxf(m[r], warp_max(mx));
      alpha[r] = expf(m[r] - m_new);  // 0 before the first tile (m = −inf)
      m[r] = m_new;
      l[r] *= alpha[r];
#pragma unroll
      for (int j = 0; j < P; ++j) {
        const float p = expf(sc[r][j] - m_new);  // 0 for a masked key
        l[r] += p;
        sc[r][j] = p;
      }
    }
#pragma unroll
    for (int j = 0; j < P; ++j) {
      float col[ROWS];
#pragma unroll
      for (int r = 0; r < ROWS; ++r) col[r] = sc[r][j];
      store_rows<ROWS>(pw + (lane * P + j) * ROWS, col);
    }
#pragma unroll
    for (int r = 0; r < VR; ++r) {
      const float f = row_of<VR, RH>(alpha, rh, r);
#pragma unroll
      for (int x = 0; x < 8; ++x) acc[r][x] *= f;
    }
    __syncwarp();

    // --- values: this lane group's tokens of the tile, quantized ones first
    if (v_lane) {
      const int n = min(TILE, end - tile), nq = max(0, min(n, v_quant - tile));
      float pm[VR];
#pragma unroll
      for (int r = 0; r < VR; ++r) pm[r] = 0.0f;
      const float* prow = pw + rh * VR;  // the lane's rows of token 0's p
      const int64_t vrow = bh * s.v_quant_cap + tile;  // the tile's first code row
      const uint32_t* vwords = a.v_codes + vrow * v_words + vch * 8 / kPerWord;
      const unsigned short* vscales = static_cast<const unsigned short*>(a.v_scale) + vrow * v_groups + vch * 8 / s.group_size;
      const unsigned short* vmins = static_cast<const unsigned short*>(a.v_min) + vrow * v_groups + vch * 8 / s.group_size;
      int j = vgrp;
#pragma unroll 2
      for (; j < nq; j += NG) {
        const uint32_t w = __ldg(vwords + static_cast<int64_t>(j) * v_words) >> v_shift;
        const float vsc = f32_of<E>(__ldg(vscales + static_cast<int64_t>(j) * v_groups));
        const float vmn = f32_of<E>(__ldg(vmins + static_cast<int64_t>(j) * v_groups));
        float code[8];
        codes16<BITS>(w, code, 0);
        if constexpr (BITS == 4) codes16<BITS>(w >> 16, code, 4);
        float p[VR];
        load_rows<VR>(prow + j * ROWS, p);
#pragma unroll
        for (int r = 0; r < VR; ++r) {
          const float pv = p[r] * vsc;
          pm[r] = fmaf(p[r], vmn, pm[r]);
#pragma unroll
          for (int x = 0; x < 8; ++x) acc[r][x] = fmaf(pv, code[x], acc[r][x]);
        }
      }
      const int64_t frow = (bh * (s.residual + 1) + (tile - v_quant)) * D + vch * 8;  // token tile's v_full row, if it were one
      for (; j < n; j += NG) {
        float v[8];
        load8<E>(a.v_full, frow + static_cast<int64_t>(j) * D, v);
        float p[VR];
        load_rows<VR>(prow + j * ROWS, p);
#pragma unroll
        for (int r = 0; r < VR; ++r)
#pragma unroll
          for (int x = 0; x < 8; ++x) acc[r][x] = fmaf(p[r], v[x], acc[r][x]);
      }
#pragma unroll
      for (int r = 0; r < VR; ++r)
#pragma unroll
        for (int x = 0; x < 8; ++x) acc[r][x] += pm[r];
    }
    __syncwarp();  // the next tile overwrites p
  }

  // --- the warps' (m, l, O) merged: each warp's l summed over its lanes, its lane groups' O into
  // its own shared tile, then every thread sums some (row, channel)s
  // over the warps and groups in order.
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    const float lw = warp_sum(l[r]);
    if (lane == 0) {
      stat_sh[warp][0][r] = m[r];
      stat_sh[warp][1][r] = lw;
    }
  }
  if (v_lane)
#pragma unroll
    for (int r = 0; r < VR; ++r) {
      float4* dst = reinterpret_cast<float4*>(pw + (vgrp * ROWS + rh * VR + r) * D + vch * 8);
      dst[0] = make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
      dst[1] = make_float4(acc[r][4], acc[r][5], acc[r][6], acc[r][7]);
    }
  __syncthreads();
  for (int i = threadIdx.x; i < nrows * D; i += kThreads) {
    const int r = i / D, x = i - r * D;
    float mx = neg_inf();
#pragma unroll
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, stat_sh[w][0][r]);
    float sum = 0.0f, o = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float mw = stat_sh[w][0][r];
      if (mw == neg_inf()) continue;  // a warp without keys: l = 0, O = 0
      const float f = expf(mw - mx);
      const float* part = reinterpret_cast<const float*>(p_sh[w]) + r * D + x;
      float ow = 0.0f;
      for (int gi = 0; gi < NG; ++gi) ow += part[gi * ROWS * D];
      sum = fmaf(f, stat_sh[w][1][r], sum);
      o = fmaf(f, ow, o);
    }
    const int64_t orow = orow0 + r;
    if (a.splits == 1) {
      store_elem<E>(a.o, orow * D + x, sum > 0.0f ? o / sum : 0.0f);
      if (x == 0) a.lse[orow] = sum > 0.0f ? mx + logf(sum) : neg_inf();
    } else {
      const int64_t at = orow * a.splits + split;
      a.part_o[at * D + x] = o;
      if (x == 0) {
        a.part_ml[2 * at] = mx;
        a.part_ml[2 * at + 1] = sum;
      }
    }
  }
}

}  // namespace

template <Elem E, int BITS>
cudaError_t decode_configure(int rows, int* ctas_per_sm) {
  switch (row_tile(rows)) {
    case 1: return configure_kernel(decode_kernel<E, BITS, 1>, kThreads, 0, ctas_per_sm);
    case 2: return configure_kernel(decode_kernel<E, BITS, 2>, kThreads, 0, ctas_per_sm);
    case 4: return configure_kernel(decode_kernel<E, BITS, 4>, kThreads, 0, ctas_per_sm);
    default: return configure_kernel(decode_kernel<E, BITS, 8>, kThreads, 0, ctas_per_sm);
  }
}

template <Elem E, int BITS>
cudaError_t decode_launch(const Args& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(a.row_blocks * a.splits), static_cast<unsigned>(a.s.kv_heads),
                  static_cast<unsigned>(a.s.batch));
  switch (row_tile(a.rows)) {
    case 1: return launch_kernel(decode_kernel<E, BITS, 1>, grid, dim3(kThreads), 0, stream, a);
    case 2: return launch_kernel(decode_kernel<E, BITS, 2>, grid, dim3(kThreads), 0, stream, a);
    case 4: return launch_kernel(decode_kernel<E, BITS, 4>, grid, dim3(kThreads), 0, stream, a);
    default: return launch_kernel(decode_kernel<E, BITS, 8>, grid, dim3(kThreads), 0, stream, a);
  }
}

}  // namespace attnbench::cuda::kivi
