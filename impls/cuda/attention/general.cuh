// Attention on CUDA cores (variant `general`): any element type (f32, f16, bf16) and any head_dim
// up to DMAX (64, 128, 256 or 512), both phases, split-KV or not. The fallback for what the
// tensor-core variant does not take (f32, head dims like 80), and a second implementation of the
// others; tiled, online softmax, fp32 throughout (P is not rounded, so it is at least as accurate
// as the baseline).
//
// Grid: x = row block × split, y = KV head, z = batch (as decode_mma). CTA: 128 threads for 16
// packed rows; thread (ty, tx) = (tid / 8, tid % 8) owns row ty, keys tx + 8k of each tile and
// output columns tx + 8c. Shared memory, as f32 with rows padded to an odd stride (conflict-free
// for the K reads of 8 rows at one column):
//   Q [16][DMAX+1]   K, V [BN][DMAX+1]   P [16][BN+1]
// K and V tiles are loaded with plain coalesced loads into registers one tile ahead (the next
// tile's loads are in flight while the current one is computed), then stored to shared memory.
//
//   DMAX  BN (keys/tile)  keys/thread  O columns/thread  shared
//   64    32              4            8                 21 KiB
//   128   32              4            16                41 KiB
//   256   16              2            32                49 KiB
//   512   8               1            64                66 KiB
#pragma once

#include "kernel_common.cuh"

namespace attnbench::cuda::attn {

template <int DMAX>
struct GeneralConfig {
  static constexpr int kRows = 16;
  static constexpr int kThreads = 128;
  static constexpr int kTX = 8;  // threads per row
  static constexpr int kBN = 4096 / DMAX < 32 ? 4096 / DMAX : 32;
  static constexpr int kKeysPerThread = kBN / kTX;
  static constexpr int kColsPerThread = DMAX / kTX;
  static constexpr int kStride = DMAX + 1;
  static constexpr int kLoadsPerThread = kBN * DMAX / kThreads;  // per tensor and tile
  static constexpr size_t kSmem = (static_cast<size_t>(kRows + 2 * kBN) * kStride + kRows * (kBN + 1)) * 4;
  static_assert(DMAX == 64 || DMAX == 128 || DMAX == 256 || DMAX == 512, "general: DMAX 64, 128, 256 or 512");
  static_assert(kBN * DMAX % kThreads == 0, "general: tile loads must divide among the threads");
};

template <typename T, int DMAX>
__global__ void __launch_bounds__(GeneralConfig<DMAX>::kThreads) general_kernel(const Params p) {
  using Cfg = GeneralConfig<DMAX>;
  constexpr int ROWS = Cfg::kRows, BN = Cfg::kBN, KPT = Cfg::kKeysPerThread, CPT = Cfg::kColsPerThread;
  constexpr int STRIDE = Cfg::kStride, LPT = Cfg::kLoadsPerThread, THREADS = Cfg::kThreads;
  const float kNegInf = neg_inf();

  extern __shared__ __align__(16) unsigned char smem[];
  float* q_s = reinterpret_cast<float*>(smem);  // [ROWS][STRIDE]
  float* k_s = q_s + ROWS * STRIDE;             // [BN][STRIDE]
  float* v_s = k_s + BN * STRIDE;               // [BN][STRIDE]
  float* p_s = v_s + BN * STRIDE;               // [ROWS][BN + 1]

  const int tid = threadIdx.x, ty = tid >> 3, tx = tid & 7;
  const int D = p.s.head_dim;
  const SplitBlock<ROWS> blk(p);
  const int split = blk.split, g = blk.g, b = blk.b, G = p.s.group, R = blk.R, r0 = blk.r0, kv_len = blk.kv_len;
  // The block's rows see [0, sinks) ∪ [n_begin, n_end): the splits share the window's keys from
  // the first row's window start (0 without a window), and split 0 also takes the sink tiles
  // below it, so the work counts only keys some row sees.
  const int n_begin = window_begin(p.s, visible_end(kv_len, p.s.q_len, r0 / G, p.s.causal));
  const int sink_keys =
      split == 0 ? min(n_begin, sink_end(p.s, window_begin(p.s, blk.n_end))) : 0;  // the last row has the most sinks
  const int sink_tiles = (sink_keys + BN - 1) / BN;
  const KeyRange keys = split_keys<BN>(blk.n_end - n_begin, p.splits, split);
  const int c0 = n_begin + keys.begin, c1 = n_begin + keys.end;  // this split's window keys [c0, c1)
  const int n_tiles = sink_tiles + keys.tiles;
  const auto tile_first = [&](int tile) { return tile < sink_tiles ? tile * BN : c0 + (tile - sink_tiles) * BN; };
  const auto tile_limit = [&](int tile) { return tile < sink_tiles ? sink_keys : c1; };

  const int64_t head = (static_cast<int64_t>(b) * p.s.kv_heads + g) * p.s.kv_cap * D;
  const T* k_head = static_cast<const T*>(p.k) + head;
  const T* v_head = static_cast<const T*>(p.v) + head;

  // Q rows as f32 (zeros past R).
  const T* q = static_cast<const T*>(p.q);
  for (int e = tid; e < ROWS * D; e += THREADS) {
    const int row = e / D, x = e - row * D, r = r0 + row;
    q_s[row * STRIDE + x] = r < R ? to_f32(q[packed_row_index(p, b, g, r) * D + x]) : 0.0f;
  }

  // Tile element u of this thread: key j0 + (u / kColGroups)·kRowsPass, column x0 + (u % kColGroups)·kColsPass,
  // so consecutive threads read consecutive columns of a key row and every offset beyond the
  // thread's first element is a compile-time multiple of D or of kColsPass.
  constexpr int kColsPass = DMAX < THREADS ? DMAX : THREADS, kRowsPass = THREADS / kColsPass;
  constexpr int kColGroups = DMAX / kColsPass;
  const int x0 = tid % kColsPass, j0 = tid / kColsPass;
  float k_reg[LPT], v_reg[LPT];
  const auto load_tile = [&](int tile) {
    const int key = tile_first(tile) + j0, limit = tile_limit(tile);
    const T* k_src = k_head + static_cast<int64_t>(key) * D + x0;
    const T* v_src = v_head + static_cast<int64_t>(key) * D + x0;
#pragma unroll
    for (int u = 0; u < LPT; ++u) {
      const int dj = (u / kColGroups) * kRowsPass, dx = (u % kColGroups) * kColsPass;
      const bool ok = x0 + dx < D && key + dj < limit;
      const int64_t at = static_cast<int64_t>(dj) * D + dx;
      k_reg[u] = ok ? to_f32(k_src[at]) : 0.0f;
      v_reg[u] = ok ? to_f32(v_src[at]) : 0.0f;
    }
  };
  if (n_tiles > 0) load_tile(0);

  const int row = r0 + ty, row_pos = min(row, R - 1) / G;
  const int row_end = visible_end(kv_len, p.s.q_len, row_pos, p.s.causal);
  const int row_begin = window_begin(p.s, row_end), row_sinks = sink_end(p.s, row_begin);
  const bool modified = attention::modifies_logits(p.s);
  const float slope = p.s.alibi ? p.alibi_slopes[g * G + min(row, R - 1) % G] : 0.0f;
  const float query_pos = static_cast<float>(kv_len - p.s.q_len + row_pos), inv_scale = 1.0f / p.s.scale;
  float o[CPT];
#pragma unroll
  for (int c = 0; c < CPT; ++c) o[c] = 0.0f;
  float mx = kNegInf, l = 0.0f;
  const float sl2 = p.scale_log2;

  for (int t = 0; t < n_tiles; ++t) {
    __syncthreads();  // the previous tile's K, V and P are no longer read (and Q is written)
#pragma unroll
    for (int u = 0; u < LPT; ++u) {
      const int at = (j0 + (u / kColGroups) * kRowsPass) * STRIDE + x0 + (u % kColGroups) * kColsPass;
      k_s[at] = k_reg[u];
      v_s[at] = v_reg[u];
    }
    __syncthreads();
    if (t + 1 < n_tiles) load_tile(t + 1);  // in flight during this tile's arithmetic

    float s[KPT];
#pragma unroll
    for (int k = 0; k < KPT; ++k) s[k] = 0.0f;
    const float* q_row = q_s + ty * STRIDE;
#pragma unroll 4
    for (int x = 0; x < D; ++x) {
      const float qv = q_row[x];
#pragma unroll
      for (int k = 0; k < KPT; ++k) s[k] = fmaf(qv, k_s[(tx + 8 * k) * STRIDE + x], s[k]);
    }
    const int key0 = tile_first(t), limit = tile_limit(t);
    float tile_max = kNegInf, sg[KPT];
#pragma unroll
    for (int k = 0; k < KPT; ++k) {
      const int key = key0 + tx + 8 * k;
      // s stays in units of the scaled score (sl2 folds the scale in): a modified logit goes back
      // through 1/scale.
      if (modified) s[k] = final_logit(p.s, s[k] * p.s.scale, key, slope, query_pos) * inv_scale;
      sg[k] = p.s.signed_weights ? static_cast<float>((s[k] > 0.0f) - (s[k] < 0.0f)) : 1.0f;  // cog: softmax of |s|
      if (p.s.signed_weights) s[k] = fabsf(s[k]);
      if (key >= limit || key >= row_end || (key < row_begin && key >= row_sinks)) s[k] = kNegInf;
      tile_max = fmaxf(tile_max, s[k]);
    }
    // The row's 8 threads are lanes 8·(ty % 4) .. +7 of one warp.
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 4)) * sl2;
    const float new_mx = fmaxf(mx, tile_max);
    const float base = new_mx == kNegInf ? 0.0f : new_mx;
    const float alpha = ptx::exp2_approx(mx - base);
    mx = new_mx;
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < KPT; ++k) {
      const float pv = ptx::exp2_approx(fmaf(s[k], sl2, -base));
      p_s[ty * (BN + 1) + tx + 8 * k] = pv * sg[k];
      sum += pv;
    }
    l = l * alpha + sum;
#pragma unroll
    for (int c = 0; c < CPT; ++c) o[c] *= alpha;
    __syncthreads();  // P of the row visible to its 8 threads (written by all of them)

    const float* p_row = p_s + ty * (BN + 1);
#pragma unroll
    for (int j = 0; j < BN; ++j) {
      const float pj = p_row[j];
      const float* v_row = v_s + j * STRIDE + tx;
#pragma unroll
      for (int c = 0; c < CPT; ++c) o[c] = fmaf(pj, v_row[8 * c], o[c]);
    }
  }

  float row_sum = l;
  row_sum += __shfl_xor_sync(0xffffffffu, row_sum, 1);
  row_sum += __shfl_xor_sync(0xffffffffu, row_sum, 2);
  row_sum += __shfl_xor_sync(0xffffffffu, row_sum, 4);
  if (row >= R) return;
  const int64_t idx = packed_row_index(p, b, g, row);
  const float inv = row_sum > 0.0f ? 1.0f / row_sum : 0.0f;
  const int64_t rows_total = static_cast<int64_t>(p.s.batch) * p.s.q_heads * p.s.q_len;
  if (p.splits == 1) {
    T* out = static_cast<T*>(p.o) + idx * D;
#pragma unroll
    for (int c = 0; c < CPT; ++c)
      if (tx + 8 * c < D) out[tx + 8 * c] = from_f32<T>(o[c] * inv);
    if (tx == 0) p.lse[idx] = row_sum > 0.0f ? natural_lse(mx, row_sum, p) : kNegInf;
  } else {
    float* out = p.part_o + (split * rows_total + idx) * D;
#pragma unroll
    for (int c = 0; c < CPT; ++c)
      if (tx + 8 * c < D) out[tx + 8 * c] = o[c] * inv;
    if (tx == 0) p.part_lse[split * rows_total + idx] = row_sum > 0.0f ? natural_lse(mx, row_sum, p) : kNegInf;
  }
}

template <Elem E, int DMAX>
LaunchShape general_shape() {
  using Cfg = GeneralConfig<DMAX>;
  return {Cfg::kRows, Cfg::kThreads, Cfg::kSmem, 4 * Cfg::kBN};
}

template <Elem E, int DMAX>
cudaError_t general_configure(int* ctas_per_sm) {
  using Cfg = GeneralConfig<DMAX>;
  return configure_kernel(general_kernel<typename ElemType<E>::T, DMAX>, Cfg::kThreads, Cfg::kSmem, ctas_per_sm);
}

template <Elem E, int DMAX>
cudaError_t general_launch(const Params& p, int row_blocks, cudaStream_t stream) {
  using T = typename ElemType<E>::T;
  using Cfg = GeneralConfig<DMAX>;
  const dim3 grid(static_cast<unsigned>(row_blocks * p.splits), static_cast<unsigned>(p.s.kv_heads),
                  static_cast<unsigned>(p.s.batch));
  general_kernel<T, DMAX><<<grid, Cfg::kThreads, Cfg::kSmem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace attnbench::cuda::attn
