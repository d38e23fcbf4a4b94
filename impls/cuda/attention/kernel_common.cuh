// Device-side pieces shared by the attention kernels: element types, the causal rule, the packed
// row mapping (and head_sparse's task rows), swizzled shared-memory tiles and their cp.async
// loaders, and the online-softmax bookkeeping in base 2.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "../runtime/device_math.cuh"
#include "../runtime/launch.cuh"
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

// Element i of a tensor whose element type is a runtime value (the row kernels of jakiro, the KV
// stages), as fp32; and v stored there, rounded to nearest.
__device__ __forceinline__ float load_elem(const void* p, Elem e, int64_t i) {
  switch (e) {
    case Elem::f16: return to_f32(static_cast<const __half*>(p)[i]);
    case Elem::bf16: return to_f32(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}
__device__ __forceinline__ void store_elem(void* p, Elem e, int64_t i, float v) {
  switch (e) {
    case Elem::f16: static_cast<__half*>(p)[i] = from_f32<__half>(v); break;
    case Elem::bf16: static_cast<__nv_bfloat16*>(p)[i] = from_f32<__nv_bfloat16>(v); break;
    default: static_cast<float*>(p)[i] = v;
  }
}

// A row's natural-log LSE from its base-2 running max mx = fl(max·scale_log2) and sum l > 0:
// max·scale + ln l, evaluated once per row in fp64 (mx / scale_log2 recovers max·scale to one
// fp32 rounding; mx·ln 2 in fp32 would add three more).
__device__ __forceinline__ float natural_lse(float mx, float l, const Params& p) {
  return static_cast<float>(static_cast<double>(mx) / p.scale_log2 * p.s.scale + log(static_cast<double>(l)));
}

// Keys [0, end) are visible to query i of a sequence with kv_len keys (bottom-right causal): the
// 32-bit twin of attention::visible_end, kept in int so the hot loops stay in 32-bit registers.
__device__ __forceinline__ int visible_end(int kv_len, int q_len, int i, bool causal) {
  if (!causal) return kv_len;
  const int end = kv_len - q_len + i + 1;
  return end < 0 ? 0 : (end > kv_len ? kv_len : end);
}

// The window and sinks (attention_common.h): a row whose keys end at `end` sees
// [0, sink_end(begin)) ∪ [begin, end), begin = window_begin(end). 32-bit twins.
__device__ __forceinline__ int window_begin(const attention::AttentionParams& s, int end) {
  return s.window > 0 && end > s.window ? end - s.window : 0;
}
__device__ __forceinline__ int sink_end(const attention::AttentionParams& s, int begin) { return min(s.sinks, begin); }

// The final logit of a scaled score (attention_common.h): soft-cap (tanhf, 2 ulp), then ALiBi's
// slope·(key − pos), pos the query's position, then the key's bias (with s.key_bias).
__device__ __forceinline__ float final_logit(const attention::AttentionParams& s, float logit, int key, float slope, float pos,
                                             float bias) {
  if (s.softcap > 0.0f) logit = s.softcap * tanhf(logit / s.softcap);
  if (s.alibi) logit = fmaf(slope, static_cast<float>(key) - pos, logit);
  if (s.key_bias) logit += bias;
  return logit;
}

// Whether query i of sequence b does not see `key`, below its visible end, for the tree mask
// (attention::tree_visible): a tree key whose bit is clear. Always false without s.tree_mask.
__device__ __forceinline__ bool tree_hides(const Params& p, int b, int i, int kv_len, int key) {
  return p.s.tree_mask && !attention::tree_visible(p.s, attention::tree_row(p.s, p.tree_mask, b, i), kv_len, key);
}

// The Q/O/LSE row (b, h, i) of packed row r of KV head g (attention_launch.h): multiply by
// head_dim for Q and O.
__device__ __forceinline__ int64_t packed_row_index(const Params& p, int b, int g, int r) {
  const int i = r / p.s.group;
  const int h = g * p.s.group + (r - i * p.s.group);
  return (static_cast<int64_t>(b) * p.s.q_heads + h) * p.s.q_len + i;
}

// A KV head's task rows (attention_launch.h): positions pos < task_rows(), each packed row
// task_row(pos) — every packed row in order, or with head_sparse its active ones from the row map.
__device__ __forceinline__ int task_rows(const Params& p, int b, int g) {
  return p.s.head_sparse ? p.row_count[b * p.s.kv_heads + g] : p.s.group * p.s.q_len;
}
__device__ __forceinline__ int task_row(const Params& p, int b, int g, int pos) {
  return static_cast<int>(attention::packed_row(p.s, p.row_map, b, g, pos));
}

// Two floats rounded to the output type, stored as one 4-byte word (x is even).
__device__ __forceinline__ void store_pair(float* dst, float a, float b) { *reinterpret_cast<float2*>(dst) = {a, b}; }
__device__ __forceinline__ void store_pair(__half* dst, float a, float b) {
  *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(a, b);
}
__device__ __forceinline__ void store_pair(__nv_bfloat16* dst, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(a, b);
}

// Where the key positions of (sequence b, KV head g) are read: position t's row of K, of V (at
// v_stride) and of key_bias, counted from the buffers' start — attention::key_row(s, key_idx, b,
// g, t), taken apart once per CTA into the head's first row and its list (null without key_index),
// so that a row costs an add, or a list entry and an add: key_row per row cost the general kernel
// 60 registers at DMAX 512 (sm_90), its 64-bit products recomputed for every row in flight. A
// list is read below its length only: the entries past it name keys no row may see.
struct KeyRows {
  const int32_t* list;  // with key_index: (b, g)'s list, key_idx's row for b (shared) or (b, g)
  int64_t head;         // key_row of position 0 without a list, the head's first cache row with one
  __device__ __forceinline__ KeyRows(const attention::AttentionParams& s, const int32_t* key_idx, int b, int g) {
    const int64_t bg = static_cast<int64_t>(b) * s.kv_heads + g;
    list = s.key_index ? key_idx + (s.key_index == 2 ? bg : b) * s.kv_cap : nullptr;
    head = bg * (s.key_index ? s.cache_cap : s.kv_cap);
  }
  __device__ __forceinline__ bool gathered() const { return list != nullptr; }
  __device__ __forceinline__ int64_t operator()(int t) const { return head + (list ? list[t] : t); }
};

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

// The widths a tensor-core kernel of tile width D (a multiple of 64) runs at: key rows head_dim and
// value rows v_head_dim wide, multiples of 8 (16-byte cp.async chunks), each padded to 16 for the
// mma steps. Inside a tile row the chunks past a width's own and below its padded end are
// zero-filled (a 40-wide key's dims 40..47 meet zeros on both sides of Q·Kᵀ); those past the padded
// end are never written or read, and the mma steps over them are skipped, so a narrower head costs
// its own arithmetic, only the shared memory of the tile.
struct MmaWidths {
  int k_chunks;  // 16-byte chunks of a Q or K row (head_dim / 8)
  int k_steps;   // 16-dim steps of Q·Kᵀ (head_dim / 16, rounded up); 2·k_steps chunks filled
  int v_chunks;  // of a V or O row (v_head_dim / 8)
  int v_steps;   // 16-column steps of P·V; 2·v_steps chunks filled
  __device__ __forceinline__ explicit MmaWidths(const attention::AttentionParams& s)
      : k_chunks(s.head_dim / 8), k_steps((s.head_dim + 15) / 16), v_chunks(s.v_head_dim / 8),
        v_steps((s.v_head_dim + 15) / 16) {}
};

// Rows [0, ROWS) of a K or V tile starting at key position `key0`, of the buffer `base` whose rows
// are `stride` elements apart, each position's row given by `keys` (KeyRows), `chunks` 16-byte
// chunks of each read and chunks [chunks, fill) zero-filled (MmaWidths); positions at or beyond
// valid_end are zero-filled without reading global memory (neither the row nor its list entry), so
// the NaN padding past kv_len is never touched. Thread tid copies chunk tid % C of positions
// tid / C + i·(THREADS / C): without a list its source advances by a fixed stride, with one each
// row's address is looked up once; its destination advances by a compile-time stride when that
// row stride is a multiple of 8 (rows 8 apart share a swizzle); otherwise (a warp loading its own
// tile) the swizzle is recomputed.
template <typename T, int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_kv_tile(uint32_t dst, const T* base, int stride, int chunks, int fill, const KeyRows& keys,
                                             int key0, int valid_end, int tid) {
  constexpr int kChunks = D / 8, kRowsPerPass = THREADS / kChunks;
  static_assert(THREADS % kChunks == 0 && ROWS % kRowsPerPass == 0, "load_kv_tile: uneven tile");
  const int row0 = tid / kChunks, ch = tid % kChunks;
  if (ch >= fill) return;  // past the padded width: never read
  const bool in_row = ch < chunks;
  // An invalid row reads nothing, but cp.async still wants a mapped address: the tile's first
  // key, which callers guarantee valid (key0 < valid_end).
  const T* first = base + keys(key0) * stride;
  const T* src = first + static_cast<int64_t>(row0) * stride + ch * 8;  // without a list
  const uint32_t dst0 = dst + swizzle<D>(row0, ch);
#pragma unroll
  for (int it = 0; it < ROWS / kRowsPerPass; ++it) {
    const int row = row0 + it * kRowsPerPass;
    const bool ok = in_row && key0 + row < valid_end;
    const T* from = !ok             ? first
                    : keys.gathered() ? base + keys(key0 + row) * stride + ch * 8
                                      : src + static_cast<int64_t>(it * kRowsPerPass) * stride;
    const uint32_t to = kRowsPerPass % 8 == 0 ? dst0 + static_cast<uint32_t>(it * kRowsPerPass * D * 2)
                                              : dst + swizzle<D>(row, ch);
    ptx::cp_async_16(to, from, ok);
  }
}

// The Q rows of positions [r0, r0 + ROWS) of KV head g's task rows (task_row: the packed rows, or
// with head_sparse the active ones), k_chunks chunks each read and the rest of the padded width
// zero-filled; positions at or beyond R are zero-filled.
template <typename T, int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_q_tile(uint32_t dst, const Params& p, const MmaWidths& w, int b, int g, int r0,
                                            int R, int tid) {
  constexpr int kChunks = D / 8, kRowsPerPass = THREADS / kChunks;
  static_assert(THREADS % kChunks == 0, "load_q_tile: uneven rows");
  constexpr int kPasses = (ROWS + kRowsPerPass - 1) / kRowsPerPass;
  const T* q = static_cast<const T*>(p.q);
  const int row0 = tid / kChunks, ch = tid % kChunks;
  if (ch >= 2 * w.k_steps) return;
  const int d = p.s.head_dim;
#pragma unroll
  for (int it = 0; it < kPasses; ++it) {
    const int row = row0 + it * kRowsPerPass, r = r0 + row;
    if (ROWS % kRowsPerPass != 0 && row >= ROWS) break;
    const bool ok = r < R && ch < w.k_chunks;
    const T* src = q + (ok ? packed_row_index(p, b, g, task_row(p, b, g, r)) * d + ch * 8 : 0);
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
// The max or sum of a value over TX consecutive lanes (TX a power of two up to 32: a general
// kernel's row, or a whole warp).
template <int TX>
__device__ __forceinline__ float row_max(float v) {
#pragma unroll
  for (int off = 1; off < TX; off <<= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
template <int TX>
__device__ __forceinline__ float row_sum(float v) {
#pragma unroll
  for (int off = 1; off < TX; off <<= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// --- one warp's share of a tile: S = Q·Kᵀ, online softmax, O += P·V ---------------------------
// A warp owns MT 16-row tiles of Q (rows row0 + 16·mi, in a swizzled [rows][D] tile at q_tile)
// and multiplies them with KEYS keys of a swizzled K/V tile (rows 0..KEYS−1). s, o, mx and l are
// the warp's accumulators in the mma C layout (ptx.cuh): the thread holds rows g and g+8 of each
// 16-row tile, columns 2t and 2t+1 of each 8-column tile.

// ldmatrix lanes: A (Q) and the transposed V both point at rows lane % 16, chunk + lane / 16; B (K)
// at keys (lane % 8) + 8·(lane / 16), chunk + (lane / 8) % 2 (ptx.cuh's fragment layouts).
template <int D>
struct TileLanes {
  LdsmLane<D> a, b;
  __device__ __forceinline__ explicit TileLanes(int lane)
      : a(lane & 15, lane >> 4), b((lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1) {}
};

// The accumulators before the first tile: O = 0, running max −inf, sums 0.
template <int MT, int DT>
__device__ __forceinline__ void warp_init(float (&o)[MT][DT][4], float (&mx)[MT][2], float (&l)[MT][2]) {
#pragma unroll
  for (int mi = 0; mi < MT; ++mi) {
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int c = 0; c < 4; ++c) o[mi][dt][c] = 0.0f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[mi][h] = neg_inf();
      l[mi][h] = 0.0f;
    }
  }
}

// S = Q·Kᵀ over the first k_steps 16-dim steps of the tile width (MmaWidths; the steps past them
// hold no dims of the head).
template <typename T, int D, int MT, int KEYS>
__device__ __forceinline__ void warp_qk(float (&s)[MT][KEYS / 8][4], uint32_t q_tile, int row0, uint32_t k_tile,
                                        const TileLanes<D>& lanes, int k_steps) {
  using M = ptx::Mma<T>;
#pragma unroll
  for (int mi = 0; mi < MT; ++mi)
#pragma unroll
    for (int nt = 0; nt < KEYS / 8; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) s[mi][nt][c] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    if (kk >= k_steps) continue;  // uniform: a step past the head's dims
    uint32_t a[MT][4];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
      ptx::ldsm_x4(q_tile + lanes.a.at(row0 + mi * 16, kk), a[mi][0], a[mi][1], a[mi][2], a[mi][3]);
#pragma unroll
    for (int nj = 0; nj < KEYS / 16; ++nj) {
      uint32_t b0, b1, b2, b3;  // keys 16nj..+7 (k lo, k hi), keys 16nj+8..+15 (k lo, k hi)
      ptx::ldsm_x4(k_tile + lanes.b.at(16 * nj, kk), b0, b1, b2, b3);
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) {
        M::run(s[mi][2 * nj], a[mi], b0, b1);
        M::run(s[mi][2 * nj + 1], a[mi], b2, b3);
      }
    }
  }
}

// The tile's max of each of the thread's rows over the quad (unscaled scores; −inf when masked).
template <int MT, int NT>
__device__ __forceinline__ void warp_tile_max(const float (&s)[MT][NT][4], float (&tile_max)[MT][2]) {
#pragma unroll
  for (int mi = 0; mi < MT; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float m = neg_inf();
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) m = fmaxf(m, fmaxf(s[mi][nt][2 * h], s[mi][nt][2 * h + 1]));
      tile_max[mi][h] = quad_max(m);
    }
}

// Online softmax of one tile (masked entries −inf) whose rows' max over the tile is tile_max
// (unscaled): s becomes P = 2^(s·scale_log2 − base), and l and o are rescaled to the new running
// max (see above).
template <int MT, int NT, int DT>
__device__ __forceinline__ void warp_softmax_at(float (&s)[MT][NT][4], float (&o)[MT][DT][4], float (&mx)[MT][2],
                                                float (&l)[MT][2], const float (&tile_max)[MT][2], float scale_log2) {
  const float kNegInf = neg_inf();
#pragma unroll
  for (int mi = 0; mi < MT; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float new_mx = fmaxf(mx[mi][h], tile_max[mi][h] * scale_log2);
      const float base = new_mx == kNegInf ? 0.0f : new_mx;
      const float alpha = ptx::exp2_approx(mx[mi][h] - base);
      mx[mi][h] = new_mx;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const float pv = ptx::exp2_approx(fmaf(s[mi][nt][2 * h + j], scale_log2, -base));
          s[mi][nt][2 * h + j] = pv;
          sum += pv;
        }
      l[mi][h] = l[mi][h] * alpha + sum;
#pragma unroll
      for (int dt = 0; dt < DT; ++dt) {
        o[mi][dt][2 * h] *= alpha;
        o[mi][dt][2 * h + 1] *= alpha;
      }
    }
}

// The same with the rows' max taken over this warp's tile alone.
template <int MT, int NT, int DT>
__device__ __forceinline__ void warp_softmax(float (&s)[MT][NT][4], float (&o)[MT][DT][4], float (&mx)[MT][2],
                                             float (&l)[MT][2], float scale_log2) {
  float tile_max[MT][2];
  warp_tile_max(s, tile_max);
  warp_softmax_at(s, o, mx, l, tile_max, scale_log2);
}

// O += P·V over the first v_steps 16-column steps (MmaWidths): P (rounded to T) comes from s, whose
// C layout over two 8-key tiles is the A layout of one 16-key step; V's B fragments come transposed
// from the [keys][D] tile.
template <typename T, int D, int MT, int KEYS>
__device__ __forceinline__ void warp_pv(float (&o)[MT][D / 8][4], const float (&s)[MT][KEYS / 8][4], uint32_t v_tile,
                                        const TileLanes<D>& lanes, int v_steps) {
  using M = ptx::Mma<T>;
#pragma unroll
  for (int kj = 0; kj < KEYS / 16; ++kj) {
    uint32_t a[MT][4];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) {
      a[mi][0] = M::pack(s[mi][2 * kj][0], s[mi][2 * kj][1]);
      a[mi][1] = M::pack(s[mi][2 * kj][2], s[mi][2 * kj][3]);
      a[mi][2] = M::pack(s[mi][2 * kj + 1][0], s[mi][2 * kj + 1][1]);
      a[mi][3] = M::pack(s[mi][2 * kj + 1][2], s[mi][2 * kj + 1][3]);
    }
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      if (dp >= v_steps) continue;
      uint32_t b0, b1, b2, b3;  // dims 16dp..+7 (keys lo, keys hi), dims 16dp+8..+15 (keys lo, hi)
      ptx::ldsm_x4_trans(v_tile + lanes.a.at(16 * kj, dp), b0, b1, b2, b3);
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) {
        M::run(o[mi][2 * dp], a[mi], b0, b1);
        M::run(o[mi][2 * dp + 1], a[mi], b2, b3);
      }
    }
  }
}

// --- split-KV ------------------------------------------------------------------------------------
// The CTA of a split kernel (grid x = row block × split, y = KV head, z = batch): task positions
// [r0, r0 + ROWS) of the KV head's R (task_rows, task_row: packed rows ascend with them) and the
// keys they see: [0, n_end), n_end being the last position's (causal rows only grow). A block at
// or past R (head_sparse: beyond its KV head's active rows) sees no key.
template <int ROWS>
struct SplitBlock {
  int split, b, g, R, r0, kv_len, n_end;
  __device__ __forceinline__ explicit SplitBlock(const Params& p) {
    split = static_cast<int>(blockIdx.x) % p.splits;
    r0 = static_cast<int>(blockIdx.x) / p.splits * ROWS;
    g = blockIdx.y;
    b = blockIdx.z;
    R = task_rows(p, b, g);
    kv_len = p.kv_len[attention::kv_len_index(p.s, b, g)];
    const int last = min(r0 + ROWS, R) - 1;
    n_end = r0 < R ? visible_end(kv_len, p.s.q_len, task_row(p, b, g, last) / p.s.group, p.s.causal) : 0;
  }
};

// The keys [begin, end) of split `split` of a row block that sees keys [0, n_end): the splits share
// them evenly in whole tiles of TILE keys, so a short (ragged) sequence gives short splits.
struct KeyRange {
  int begin, end, tiles;
};
template <int TILE>
__device__ __forceinline__ KeyRange split_keys(int n_end, int splits, int split) {
  const int per_split = ((n_end + splits - 1) / splits + TILE - 1) / TILE * TILE;
  const int begin = split * per_split;
  const int end = min(begin + per_split, n_end);
  return {begin, end, end > begin ? (end - begin + TILE - 1) / TILE : 0};
}

// The key tiles of TILE keys that split `split` of `splits` of a row block visits. The rows see
// [0, sinks) ∪ [n_begin, n_end), n_begin the first row's window start (0 without a window) and
// first_row_end that row's last visible key + 1: the splits share the window's keys, and split 0
// also takes the sink tiles below them, so the work counts only keys some row sees. Tile t holds
// keys [first(t), first(t) + TILE) of which those below limit(t) exist.
template <int TILE>
struct VisibleTiles {
  int sink_keys, sink_tiles, c0, c1, tiles;  // [c0, c1): this split's window keys
  __device__ __forceinline__ VisibleTiles(const attention::AttentionParams& s, int first_row_end, int n_end, int splits,
                                          int split) {
    const int n_begin = window_begin(s, first_row_end);
    sink_keys = split == 0 ? min(n_begin, sink_end(s, window_begin(s, n_end))) : 0;  // the last row has the most sinks
    sink_tiles = (sink_keys + TILE - 1) / TILE;
    const KeyRange keys = split_keys<TILE>(n_end - n_begin, splits, split);
    c0 = n_begin + keys.begin;
    c1 = n_begin + keys.end;
    tiles = sink_tiles + keys.tiles;
  }
  __device__ __forceinline__ int first(int tile) const { return tile < sink_tiles ? tile * TILE : c0 + (tile - sink_tiles) * TILE; }
  __device__ __forceinline__ int limit(int tile) const { return tile < sink_tiles ? sink_keys : c1; }
};

}  // namespace attnbench::cuda::attn
