// The SnapKV scorer's window logits on CUDA cores (semantics: reference/kvcomp/snapkv_scorer.h,
// step 1), in fp32 whatever the storage type: fp32 dot products, softmax and P (a bf16 P would fall
// outside the SET tie band; tensor-core accumulation is not IEEE fp32, so the CUDA cores do the
// dots).
//
// One tile engine, two kernels (snapkv_launch.h):
//   stats   per (b, g, key split): row blocks outer, key tiles inner; each thread keeps an online
//           max and sum of its own columns for its 4 rows, merged over the 8 lanes and the 2 warps
//           of a row at the end of the split -> part_m, part_l [split][row]. The keys are those of
//           the softmax (stats_first, stats_keys): every key, or with candidate_softmax the
//           candidates alone.
//   scores  per (b, g, tile of candidates): row blocks inner; P = exp(logit − m_r)·(1/l_r) goes
//           through a shared [64][128] tile, and thread j sums column j over each head's w rows in
//           row order -> a[b, h, j − sinks] = sum·(1/w), or / the queries that see j (visible_mean).
//           With log_decay, 1/l_r is the row's weight γ^(w−1−i) / l_r (combine: row_inv_l), so each
//           window query's probabilities carry their decay, as the CPU's weight / Σ.
//           No atomics: every bit is independent of scheduling.
// Both kernels compute a logit with the same code and order (dims in order, one fmaf chain per
// element, then one rounded multiply by the scale), so the scores pass sees exactly the logits
// whose max and sum the stats pass took.
//
// Tile: 64 packed rows × 128 keys, 256 threads. Warp w = 2·wr + wc, lane = 8·lr + lc; a thread owns
// rows 16·wr + 4·lr + m (m < 4) and keys 64·wc + 4·lc + n and 64·wc + 32 + 4·lc + n (n < 4), so
// its per-dim operands are one float4 of Q (shared by the 8 lanes of its lr: one broadcast) and
// two float4 of K (8 lanes read 128 contiguous bytes: conflict-free). 32 FMAs per 3 shared loads.
// head_dim goes 16 dims at a time through two shared stages (f32, transposed: Q [16][64],
// K [16][128]); the next stage's global loads are in flight while the current one is multiplied.
// A thread loads 4 dims of one Q row and 8 dims of one key (16-byte loads where the row length
// allows), converts them to f32 and stores them transposed (consecutive lanes: consecutive rows
// or keys, so the stores are conflict-free).
#pragma once

#include "attention/kernel_common.cuh"
#include "snapkv_launch.h"

namespace attnbench::cuda::snapkv {

using attn::to_f32;

// (m, l) of a softmax over a set of logits: max and Σ exp(x − max). (−inf, 0) is the empty set.
__device__ __forceinline__ void merge_stats(float& m, float& l, float m2, float l2) {
  const float mn = fmaxf(m, m2);
  if (mn == neg_inf()) return;  // both empty: stays (−inf, 0), never exp(−inf + inf)
  l = l * expf(m - mn) + l2 * expf(m2 - mn);
  m = mn;
}

// --- loads: N consecutive elements of a row as f32 ---------------------------------------------
template <typename T>
__device__ __forceinline__ float elem_from_bits(uint32_t bits16);
template <>
__device__ __forceinline__ float elem_from_bits<__half>(uint32_t bits16) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits16)));
}
template <>
__device__ __forceinline__ float elem_from_bits<__nv_bfloat16>(uint32_t bits16) {
  return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(bits16)));
}

// src must be aligned to N·sizeof(T) bytes (8 or 16, or 32 for 8 floats: two 16-byte loads).
template <typename T, int N>
__device__ __forceinline__ void load_vec(const T* src, float (&out)[N]) {
  constexpr int kBytes = N * static_cast<int>(sizeof(T));
  static_assert(kBytes == 8 || kBytes % 16 == 0, "load_vec: 8 bytes or whole 16-byte words");
  uint32_t w[kBytes / 4];
  if constexpr (kBytes == 8) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(src));
    w[0] = v.x;
    w[1] = v.y;
  } else {
#pragma unroll
    for (int i = 0; i < kBytes / 16; ++i) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(src) + i);
      w[4 * i] = v.x;
      w[4 * i + 1] = v.y;
      w[4 * i + 2] = v.z;
      w[4 * i + 3] = v.w;
    }
  }
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int e = 0; e < N; ++e) out[e] = __uint_as_float(w[e]);
  } else {
    // Little endian: the lower half of a word is the element with the smaller index.
#pragma unroll
    for (int e = 0; e < N; ++e) out[e] = elem_from_bits<T>(e % 2 == 0 ? w[e / 2] & 0xffffu : w[e / 2] >> 16);
  }
}

// Elements x .. x+N−1 of a row (zeros for x + e ≥ d or an invalid row). `vec`: the row length in
// bytes allows the aligned vector load (x is always a multiple of N).
template <typename T, int N>
__device__ __forceinline__ void load_chunk(const T* row, int x, int d, bool row_ok, bool vec, float (&out)[N]) {
  if (row_ok && vec && x + N <= d) {
    load_vec<T, N>(row + x, out);
    return;
  }
#pragma unroll
  for (int e = 0; e < N; ++e) out[e] = row_ok && x + e < d ? to_f32(row[x + e]) : 0.0f;
}

// --- the tile engine ----------------------------------------------------------------------------
template <typename T>
struct Operands {
  const T* q;  // the group's packed row 0 (row r at q + r·d)
  const T* k;  // the first key of the range: the KV head's key `first`
  int rows;    // GW
  int keys;    // keys in the range: those at or past it read as zeros
  int d;
  bool q_vec, k_vec;
};

// The operands of group bg against keys [first, first + keys) of its KV head: all of them for the
// statistics, the candidates for the scores.
template <typename T>
__device__ __forceinline__ Operands<T> operands(const Params& p, int bg, int first, int keys) {
  const int GW = p.sel.group * p.m.obs_window;
  Operands<T> op;
  op.q = static_cast<const T*>(p.q_obs) + static_cast<int64_t>(bg) * GW * p.sel.head_dim;
  op.k = static_cast<const T*>(p.k) + (static_cast<int64_t>(bg) * p.sel.kv_len + first) * p.sel.head_dim;
  op.rows = GW;
  op.keys = keys;
  op.d = p.sel.head_dim;
  // 4 elements of Q (8 or 16 bytes) and 8 of K (16 or 32 bytes) at a multiple of 4 (8) elements:
  // aligned when every row starts on such a boundary (the offset `first` is whole rows).
  op.q_vec = p.sel.head_dim % 4 == 0;
  op.k_vec = sizeof(T) == 4 ? p.sel.head_dim % 4 == 0 : p.sel.head_dim % 8 == 0;
  return op;
}

struct ThreadTile {
  int row0;  // first of the thread's 4 rows in the block
  int col0;  // first key of its first group of 4 (the second is 32 further)
  int wc, lc;
  __device__ __forceinline__ explicit ThreadTile(int tid) {
    const int warp = tid >> 5, lane = tid & 31;
    wc = warp & 1;
    lc = lane & 7;
    row0 = (warp >> 1) * 16 + (lane >> 3) * 4;
    col0 = wc * 64 + lc * 4;
  }
  // Key offset in the tile of the thread's column n (0..7).
  __device__ __forceinline__ int col(int n) const { return col0 + (n >> 2) * 32 + (n & 3); }
};

// acc[m][n] = q_{r0 + row0 + m} · k_{j0 + col(n)} in fp32 (zero rows and keys past the ends). Every
// thread of the CTA calls it: it synchronises, and returns after a barrier, so the stages may be
// overwritten at once by the next call.
template <typename T>
__device__ __forceinline__ void tile_dots(const Operands<T>& op, int r0, int j0, float* stages, const ThreadTile& tt,
                                          float (&acc)[4][8]) {
  constexpr int BM = kRowsPerBlock, BN = kKeysPerTile, DK = kDimsPerStage;
  constexpr int kStage = DK * (BM + BN);
  static_assert(kLogitsThreads == 4 * BM && kLogitsThreads == 2 * BN && DK == 16,
                "tile_dots: a thread loads 4 dims of one Q row and 8 dims of one key per stage");
  const int tid = threadIdx.x;
  const int q_row = tid % BM, q_dim = (tid / BM) * 4;
  const int k_key = tid % BN, k_dim = (tid / BN) * 8;
  const bool q_ok = r0 + q_row < op.rows, k_ok = j0 + k_key < op.keys;
  const T* q_src = op.q + static_cast<int64_t>(q_ok ? r0 + q_row : 0) * op.d;
  const T* k_src = op.k + static_cast<int64_t>(k_ok ? j0 + k_key : 0) * op.d;

#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int n = 0; n < 8; ++n) acc[m][n] = 0.0f;

  float qr[4], kr[8];
  const auto store_stage = [&](int stage) {
    float* qs = stages + stage * kStage;
    float* ks = qs + DK * BM;
#pragma unroll
    for (int e = 0; e < 4; ++e) qs[(q_dim + e) * BM + q_row] = qr[e];
#pragma unroll
    for (int e = 0; e < 8; ++e) ks[(k_dim + e) * BN + k_key] = kr[e];
  };
  const int chunks = (op.d + DK - 1) / DK;
  load_chunk<T, 4>(q_src, q_dim, op.d, q_ok, op.q_vec, qr);
  load_chunk<T, 8>(k_src, k_dim, op.d, k_ok, op.k_vec, kr);
  store_stage(0);
  __syncthreads();
  for (int c = 0; c < chunks; ++c) {
    const bool more = c + 1 < chunks;
    if (more) {  // in flight during this stage's arithmetic
      load_chunk<T, 4>(q_src, (c + 1) * DK + q_dim, op.d, q_ok, op.q_vec, qr);
      load_chunk<T, 8>(k_src, (c + 1) * DK + k_dim, op.d, k_ok, op.k_vec, kr);
    }
    const float* qs = stages + (c & 1) * kStage;
    const float* ks = qs + DK * BM;
#pragma unroll
    for (int kk = 0; kk < DK; ++kk) {
      const float4 a = *reinterpret_cast<const float4*>(qs + kk * BM + tt.row0);
      const float4 b0 = *reinterpret_cast<const float4*>(ks + kk * BN + tt.col0);
      const float4 b1 = *reinterpret_cast<const float4*>(ks + kk * BN + tt.col0 + 32);
      const float av[4] = {a.x, a.y, a.z, a.w};
      const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) acc[m][n] = fmaf(av[m], bv[n], acc[m][n]);
    }
    // The other stage was last read in iteration c − 1, which every thread finished before the
    // barrier that ended it; this iteration's barrier publishes the store to iteration c + 1.
    if (more) store_stage((c + 1) & 1);
    __syncthreads();
  }
}

// Keys [0, end) visible to window query i, which sits at position kv_len − w + i (bottom-right
// causal: kvcomp::snapkv_visible_end; at most kv_len as i < w).
__device__ __forceinline__ int visible_end(const Params& p, int i) { return p.sel.kv_len - p.m.obs_window + i + 1; }

// The logit of a dot product: one rounded multiply (never contracted into a later subtraction, so
// both kernels see the same value).
__device__ __forceinline__ float logit_of(float dot, float scale) { return __fmul_rn(dot, scale); }

template <typename T>
__global__ void __launch_bounds__(kLogitsThreads, 2) stats_kernel(const Params p) {
  ATTNBENCH_DYNAMIC_SMEM(float, smem);
  float* stages = smem;
  float* cross = smem + kPipeBytes / sizeof(float);  // [BM][2]: the wc = 1 warps' row (m, l)
  constexpr int BM = kRowsPerBlock, BN = kKeysPerTile;
  const float kNegInf = neg_inf();
  const int split = static_cast<int>(blockIdx.x % static_cast<unsigned>(p.splits));
  const int bg = static_cast<int>(blockIdx.x / static_cast<unsigned>(p.splits));
  const int w = p.m.obs_window, GW = p.sel.group * w;
  const int64_t rows_all = static_cast<int64_t>(p.sel.batch) * p.sel.q_heads * w;
  // Keys are relative to the softmax's first key here: key j of the tiles is token first + j.
  const int first = stats_first(p.sel, p.m), keys = stats_keys(p.sel, p.m);
  const Operands<T> op = operands<T>(p, bg, first, keys);
  const ThreadTile tt(threadIdx.x);

  // This split's key tiles [t0, t1): an even share, the first `extra` splits one more.
  const int tiles = (keys + BN - 1) / BN;
  const int per = tiles / p.splits, extra = tiles % p.splits;
  const int t0 = split * per + min(split, extra), t1 = t0 + per + (split < extra ? 1 : 0);

  for (int r0 = 0; r0 < GW; r0 += BM) {
    float run_m[4], run_l[4];
    int visible[4];  // relative keys [0, visible) of the row: within the range and snapkv_visible_end; 0 past GW
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      run_m[m] = kNegInf;
      run_l[m] = 0.0f;
      const int r = r0 + tt.row0 + m;
      visible[m] = r < GW ? min(keys, visible_end(p, r % w) - first) : 0;
    }
    for (int tile = t0; tile < t1; ++tile) {
      const int j0 = tile * BN;
      float acc[4][8];
      tile_dots(op, r0, j0, stages, tt, acc);
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        float tile_max = kNegInf;
#pragma unroll
        for (int n = 0; n < 8; ++n) {
          acc[m][n] = j0 + tt.col(n) < visible[m] ? logit_of(acc[m][n], p.m.scale) : kNegInf;
          tile_max = fmaxf(tile_max, acc[m][n]);
        }
        if (tile_max == kNegInf) continue;  // none of this thread's keys is visible to the row
        const float mn = fmaxf(run_m[m], tile_max);
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < 8; ++n) sum += expf(acc[m][n] - mn);  // masked: exp(−inf) = 0
        run_l[m] = run_l[m] * expf(run_m[m] - mn) + sum;          // first visible tile: 0·0
        run_m[m] = mn;
      }
    }
    // A row's columns are spread over the 8 lanes lc of its lr (lane bits 0..2) and the two warps wc.
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
      for (int off = 1; off < 8; off <<= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, run_m[m], off);
        const float l2 = __shfl_xor_sync(0xffffffffu, run_l[m], off);
        merge_stats(run_m[m], run_l[m], m2, l2);
      }
    if (tt.wc == 1 && tt.lc == 0) {
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        cross[(tt.row0 + m) * 2] = run_m[m];
        cross[(tt.row0 + m) * 2 + 1] = run_l[m];
      }
    }
    __syncthreads();
    if (tt.wc == 0 && tt.lc == 0) {
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        const int r = r0 + tt.row0 + m;
        if (r >= GW) break;
        merge_stats(run_m[m], run_l[m], cross[(tt.row0 + m) * 2], cross[(tt.row0 + m) * 2 + 1]);
        const int64_t at = split * rows_all + static_cast<int64_t>(bg) * GW + r;
        p.part_m[at] = run_m[m];
        p.part_l[at] = run_l[m];
      }
    }
    __syncthreads();  // `cross` is rewritten by the next row block
  }
}

template <typename T>
__global__ void __launch_bounds__(kLogitsThreads, 2) scores_kernel(const Params p) {
  ATTNBENCH_DYNAMIC_SMEM(float, smem);
  float* stages = smem;
  float* ptile = smem + kPipeBytes / sizeof(float);  // [BM][BN]
  constexpr int BM = kRowsPerBlock, BN = kKeysPerTile;
  // Keys are candidate-relative here: key j of the tiles is token sinks + j.
  const int P = p.sel.candidates, S = p.sel.sinks, w = p.m.obs_window, GW = p.sel.group * w;
  const int tiles = (P + BN - 1) / BN;
  const int tile = static_cast<int>(blockIdx.x % static_cast<unsigned>(tiles));
  const int bg = static_cast<int>(blockIdx.x / static_cast<unsigned>(tiles));
  const int j0 = tile * BN;
  const Operands<T> op = operands<T>(p, bg, S, P);
  const ThreadTile tt(threadIdx.x);
  const int64_t row_base = static_cast<int64_t>(bg) * GW;  // of the group's rows in row_m, row_inv_l
  const float inv_w = 1.0f / static_cast<float>(w);

  // The column pass (threads 0..BN−1, key j0 + tid): the sum of the current head's rows so far,
  // and where the next row falls; carried across row blocks, as a head may straddle them.
  float col_sum = 0.0f;
  int head = 0, query = 0;
  for (int r0 = 0; r0 < GW; r0 += BM) {
    float acc[4][8];
    tile_dots(op, r0, j0, stages, tt, acc);
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const int r = r0 + tt.row0 + m;
      const bool row_ok = r < GW;
      const float mr = row_ok ? p.row_m[row_base + r] : 0.0f;
      const float inv_l = row_ok ? p.row_inv_l[row_base + r] : 0.0f;  // with the query's decay weight
      // Candidates past the query's position get P = 0, as in the spec (none do while recent ≥
      // w − 1, which every method's forced window satisfies).
      const int end = row_ok ? min(P, visible_end(p, r % w) - S) : 0;
      float pv[8];
#pragma unroll
      for (int n = 0; n < 8; ++n)
        pv[n] = j0 + tt.col(n) < end ? expf(logit_of(acc[m][n], p.m.scale) - mr) * inv_l : 0.0f;
      float* dst = ptile + (tt.row0 + m) * BN + tt.col0;
      *reinterpret_cast<float4*>(dst) = make_float4(pv[0], pv[1], pv[2], pv[3]);
      *reinterpret_cast<float4*>(dst + 32) = make_float4(pv[4], pv[5], pv[6], pv[7]);
    }
    __syncthreads();
    if (threadIdx.x < BN) {
      const int rows = min(BM, GW - r0), j = j0 + static_cast<int>(threadIdx.x);
      for (int rr = 0; rr < rows; ++rr) {
        col_sum += ptile[rr * BN + threadIdx.x];
        if (++query == w) {  // the head's last window query: its mean is complete
          // Divided by w, or with visible_mean by the window queries that see the key (H2O).
          if (j < P)
            p.a[(static_cast<int64_t>(bg) * p.sel.group + head) * P + j] =
                p.m.visible_mean ? col_sum / static_cast<float>(kvcomp::snapkv_divisor(p.sel, p.m, S + j)) : col_sum * inv_w;
          col_sum = 0.0f;
          query = 0;
          ++head;
        }
      }
    }
    __syncthreads();  // the P tile is rewritten by the next row block
  }
}

template <Elem E>
cudaError_t logits_configure(int* stats_ctas_per_sm, int* scores_ctas_per_sm) {
  using T = typename attn::ElemType<E>::T;
  const cudaError_t e = configure_kernel(stats_kernel<T>, kLogitsThreads, kStatsSmem, stats_ctas_per_sm);
  if (e != cudaSuccess) return e;
  return configure_kernel(scores_kernel<T>, kLogitsThreads, kScoresSmem, scores_ctas_per_sm);
}

template <Elem E>
cudaError_t stats_launch(const Params& p, cudaStream_t stream) {
  using T = typename attn::ElemType<E>::T;
  const int64_t ctas = static_cast<int64_t>(p.sel.batch) * p.sel.kv_heads * p.splits;
  return launch_kernel(stats_kernel<T>, dim3(static_cast<unsigned>(ctas)), dim3(kLogitsThreads), kStatsSmem, stream, p);
}

template <Elem E>
cudaError_t scores_launch(const Params& p, cudaStream_t stream) {
  using T = typename attn::ElemType<E>::T;
  const int64_t tiles = (p.sel.candidates + kKeysPerTile - 1) / kKeysPerTile;
  const int64_t ctas = static_cast<int64_t>(p.sel.batch) * p.sel.kv_heads * tiles;
  return launch_kernel(scores_kernel<T>, dim3(static_cast<unsigned>(ctas)), dim3(kLogitsThreads), kScoresSmem, stream, p);
}

}  // namespace attnbench::cuda::snapkv
