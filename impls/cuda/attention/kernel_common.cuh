// Device-side pieces shared by the attention kernels: element types, the causal rule, the packed
// row mapping, swizzled shared-memory tiles and their cp.async loaders, and the online-softmax
// bookkeeping in base 2.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "../runtime/ptx.cuh"
#include "attention_launch.h"

namespace attnbench::cuda::attn {

template <Elem E>
struct ElemType;
template <>
struct ElemType<Elem::f32> {
  using T = float;
};
template <>
struct ElemType<Elem::f16> {
  using T = __half;
};
template <>
struct ElemType<Elem::bf16> {
  using T = __nv_bfloat16;
};

__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__device__ __forceinline__ T from_f32(float x);
template <>
__device__ __forceinline__ float from_f32<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_f32<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

constexpr float kLn2 = 0.693147180559945309f;

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000u); }

// Keys [0, end) are visible to query i of a sequence with kv_len keys (bottom-right causal).
__device__ __forceinline__ int visible_end(int kv_len, int q_len, int i, bool causal) {
  if (!causal) return kv_len;
  const int end = kv_len - q_len + i + 1;
  return end < 0 ? 0 : (end > kv_len ? kv_len : end);
}

// The Q/O/LSE row (b, h, i) of packed row r of KV head g (attention_launch.h): multiply by
// head_dim for Q and O.
__device__ __forceinline__ int64_t packed_row_index(const Params& p, int b, int g, int r) {
  const int i = r / p.group;
  const int h = g * p.group + (r - i * p.group);
  return (static_cast<int64_t>(b) * p.q_heads + h) * p.q_len + i;
}

// --- swizzled tiles of 16-bit elements ----------------------------------------------------------
// A tile row holds D elements = D/8 chunks of 16 bytes; chunk c of row r is stored at chunk
// c ^ (r & 7). An ldmatrix phase reads one chunk column of 8 consecutive rows: the XOR spreads
// them over the 8 distinct 16-byte bank groups, and a warp's cp.async of 8 consecutive chunks of
// one row stays conflict-free too. Needs D ≥ 64 (8 chunks per row).
template <int D>
__device__ __forceinline__ uint32_t swizzle(int row, int chunk) {
  static_assert(D % 64 == 0, "the XOR swizzle needs at least 8 chunks per row");
  return static_cast<uint32_t>(row * (D * 2) + ((chunk ^ (row & 7)) << 4));
}

// ldmatrix addressing into a swizzled tile, cheap enough to keep out of the register budget. A
// lane points at row row0 + lane_row (row0 a multiple of 8, so row & 7 = lane_row & 7) and chunk
// 2·step + lane_chunk (lane_chunk in {0, 1}). As 2·step has bit 0 clear, its swizzled chunk is
// 2·step ^ x with x = lane_chunk ^ (lane_row & 7) < 8, and the XOR touches only the low three
// bits: 8·(step / 4) + ((2·(step % 4)) ^ x). So four per-lane offsets serve every step, and with
// row0 and step known at compile time an address is a register plus an immediate.
template <int D>
struct LdsmLane {
  uint32_t row_bytes;  // lane_row · D·2
  uint32_t x16[4];     // ((2j) ^ x) · 16 for j = 0..3
  __device__ __forceinline__ LdsmLane(int lane_row, int lane_chunk) {
    static_assert(D % 64 == 0, "the XOR swizzle needs at least 8 chunks per row");
    row_bytes = static_cast<uint32_t>(lane_row * D * 2);
    const int x = lane_chunk ^ (lane_row & 7);
#pragma unroll
    for (int j = 0; j < 4; ++j) x16[j] = static_cast<uint32_t>(((2 * j) ^ x) << 4);
  }
  // Byte offset of (row0 + lane_row, chunk 2·step + lane_chunk) in the tile.
  __device__ __forceinline__ uint32_t at(int row0, int step) const {
    return row_bytes + static_cast<uint32_t>(row0 * D * 2 + (step >> 2) * 128) + x16[step & 3];
  }
};

// Rows [0, ROWS) of a K or V tile starting at key `key0`; rows at or beyond valid_end − key0 are
// zero-filled without reading global memory, so the NaN padding past kv_len is never touched.
// Thread tid copies chunk tid % C of rows tid / C + i·(THREADS / C): its source advances by a
// compile-time stride, and so does its destination when that row stride is a multiple of 8 (rows
// 8 apart share a swizzle); otherwise (a warp loading its own tile) the swizzle is recomputed.
template <typename T, int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_kv_tile(uint32_t dst, const T* head_base, int key0, int valid_end, int tid) {
  constexpr int kChunks = D / 8, kRowsPerPass = THREADS / kChunks;
  static_assert(THREADS % kChunks == 0 && ROWS % kRowsPerPass == 0, "load_kv_tile: uneven tile");
  const int row0 = tid / kChunks, ch = tid % kChunks;
  const T* src = head_base + (static_cast<int64_t>(key0) + row0) * D + ch * 8;
  const uint32_t dst0 = dst + swizzle<D>(row0, ch);
#pragma unroll
  for (int it = 0; it < ROWS / kRowsPerPass; ++it) {
    const int row = row0 + it * kRowsPerPass;
    const bool ok = key0 + row < valid_end;
    // An invalid row reads nothing, but cp.async still wants a mapped address: the tile's first
    // key, which callers guarantee valid (key0 < valid_end).
    const T* from = ok ? src + it * kRowsPerPass * D : head_base + static_cast<int64_t>(key0) * D;
    const uint32_t to = kRowsPerPass % 8 == 0 ? dst0 + static_cast<uint32_t>(it * kRowsPerPass * D * 2)
                                              : dst + swizzle<D>(row, ch);
    ptx::cp_async_16(to, from, ok);
  }
}

// The Q rows [r0, r0 + ROWS) of packed rows of KV head g; rows at or beyond R are zero-filled.
template <typename T, int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_q_tile(uint32_t dst, const Params& p, int b, int g, int r0, int R, int tid) {
  constexpr int kChunks = D / 8, kRowsPerPass = THREADS / kChunks;
  static_assert(THREADS % kChunks == 0, "load_q_tile: uneven rows");
  constexpr int kPasses = (ROWS + kRowsPerPass - 1) / kRowsPerPass;
  const T* q = static_cast<const T*>(p.q);
  const int row0 = tid / kChunks, ch = tid % kChunks;
#pragma unroll
  for (int it = 0; it < kPasses; ++it) {
    const int row = row0 + it * kRowsPerPass, r = r0 + row;
    if (ROWS % kRowsPerPass != 0 && row >= ROWS) break;
    const bool ok = r < R;
    const T* src = q + (ok ? packed_row_index(p, b, g, r) * D + ch * 8 : 0);
    ptx::cp_async_16(dst + swizzle<D>(row, ch), src, ok);
  }
}

// --- online softmax in base 2 -------------------------------------------------------------------
// Per query row: mx = running max of s·scale_log2 (−inf before any visible key), l = Σ 2^(s·scale_log2
// − mx) over visible keys, O = Σ 2^(...)·v. A new tile with scaled max t gives
//   mx' = max(mx, t),  base = mx' (0 while mx' = −inf, so masked 2^(−inf − base) = 0, never NaN),
//   alpha = 2^(mx − base) rescales l and O (0 when mx = −inf; exactly 1 when mx' = mx).
// The row's max and sum live in the four lanes of a quad (mma C layout) or eight lanes (general).
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

}  // namespace attnbench::cuda::attn
