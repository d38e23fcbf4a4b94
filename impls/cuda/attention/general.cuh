// Attention on CUDA cores (variant `general`): any element type (f32, f16, bf16) and any key width
// head_dim and value width v_head_dim up to DMAX (64, 128, 256, 512 or 1024), both phases,
// split-KV or not. The fallback for what the tensor-core variant does not take (f32, head dims like
// 80, MLA's 192/128 and 576/512 key/value pairs), and a second implementation of the others; tiled,
// online softmax, fp32 throughout (P is not rounded, so it is at least as accurate as the baseline).
//
// Grid: x = row block × split, y = KV head, z = batch (as decode_mma). CTA: 128 threads for ROWS
// packed rows; thread (ty, tx) = (tid / TX, tid % TX) owns row ty, keys tx + TX·k of each tile and
// output columns tx + TX·c (a row's TX threads are consecutive lanes of one warp). Shared memory,
// as f32 with rows padded to an odd stride (conflict-free for the K reads of the rows at one column):
//   Q [ROWS][DMAX+1]   K, V [BN][DMAX+1]   P [ROWS][BN+1]
// Up to DMAX 512 the K and V tiles are loaded with plain coalesced loads into registers one tile
// ahead (the next tile's loads are in flight while the current one is computed), then stored to
// shared memory; at 1024 a tile would take 256 registers per thread, so it is loaded straight
// into shared memory between two barriers instead.
//
// V rows are v_stride apart. When V is K's buffer with v_stride = head_dim (MLA's absorbed form:
// the value is the first v_head_dim elements of the latent key row, as FlashMLA reads it), the
// DMAX 1024 kernel does not load a V tile at all: P·V reads the K tile.
//
// With head_sparse a CTA's rows are positions of its KV head's row map (kernel_common.cuh
// task_row): Q rows are gathered through it, a CTA past the active rows exits at once, and O is
// scaled by the row's gate as it is stored. With gathered keys (key_index) the key positions are a
// list's, and a thread looks each of its key rows up in it (KeyRows); with key_bias each logit
// takes its key's bias after the cap; with tree_mask a tree key whose bit is clear is masked.
//
//   DMAX  ROWS  TX  BN (keys/tile)  keys/thread  O columns/thread  shared
//   64    16    8   32              4            8                 21 KiB
//   128   16    8   32              4            16                41 KiB
//   256   16    8   16              2            32                49 KiB
//   512   16    8   8               1            64                66 KiB
//   1024  8     16  16              1            64                161 KiB  (1 CTA per SM)
#pragma once

#include "kernel_common.cuh"

namespace attnbench::cuda::attn {

template <int DMAX>
struct GeneralConfig {
  static constexpr bool kWide = DMAX == 1024;
  static constexpr int kRows = kWide ? 8 : 16;
  static constexpr int kTX = kWide ? 16 : 8;  // threads per row
  static constexpr int kThreads = kRows * kTX;
  static constexpr int kBN = kWide ? 16 : (4096 / DMAX < 32 ? 4096 / DMAX : 32);
  static constexpr int kKeysPerThread = kBN / kTX;
  static constexpr int kColsPerThread = DMAX / kTX;
  static constexpr int kStride = DMAX + 1;
  static constexpr int kLoadsPerThread = kBN * DMAX / kThreads;  // per tensor and tile
  static constexpr bool kRegisterPrefetch = !kWide;
  static constexpr size_t kSmem = (static_cast<size_t>(kRows + 2 * kBN) * kStride + kRows * (kBN + 1)) * 4;
  static_assert(DMAX == 64 || DMAX == 128 || DMAX == 256 || DMAX == 512 || DMAX == 1024,
                "general: DMAX 64, 128, 256, 512 or 1024");
  static_assert(kThreads == 128 && 32 % kTX == 0, "general: a row's threads are lanes of one warp");
  static_assert(kKeysPerThread >= 1 && kBN % kTX == 0, "general: every thread owns a key of each tile");
  static_assert(kBN * DMAX % kThreads == 0, "general: tile loads must divide among the threads");
};

template <typename T, int DMAX>
__global__ void __launch_bounds__(GeneralConfig<DMAX>::kThreads) general_kernel(const Params p) {
  using Cfg = GeneralConfig<DMAX>;
  constexpr int ROWS = Cfg::kRows, BN = Cfg::kBN, KPT = Cfg::kKeysPerThread, CPT = Cfg::kColsPerThread;
  constexpr int STRIDE = Cfg::kStride, LPT = Cfg::kLoadsPerThread, THREADS = Cfg::kThreads, TX = Cfg::kTX;
  const float kNegInf = neg_inf();

  ATTNBENCH_DYNAMIC_SMEM(unsigned char, smem);
  float* q_s = reinterpret_cast<float*>(smem);  // [ROWS][STRIDE]
  float* k_s = q_s + ROWS * STRIDE;             // [BN][STRIDE]
  float* v_s = k_s + BN * STRIDE;               // [BN][STRIDE]
  float* p_s = v_s + BN * STRIDE;               // [ROWS][BN + 1]

  const int tid = threadIdx.x, ty = tid / TX, tx = tid % TX;
  const int D = p.s.head_dim, DV = p.s.v_head_dim, VS = p.s.v_stride;
  // MLA's absorbed form: V is the first DV elements of each K row, so P·V reads the K tile. Only
  // the wide tiles skip the V load: in the register-prefetched ones the runtime choice costs ~90
  // registers (sm_90, DMAX 512), and loading V from the same rows is as correct.
  const bool v_in_k = Cfg::kWide && p.v == p.k && VS == D;
  const float* pv_s = v_in_k ? k_s : v_s;
  const SplitBlock<ROWS> blk(p);
  const int split = blk.split, g = blk.g, b = blk.b, G = p.s.group, R = blk.R, r0 = blk.r0, kv_len = blk.kv_len;
  if (r0 >= R) return;  // head_sparse: past the KV head's active rows (the whole CTA, before any barrier)
  // The sink tiles (split 0), then this split's share of the window's (kernel_common.cuh).
  const VisibleTiles<BN> vis(p.s, visible_end(kv_len, p.s.q_len, task_row(p, b, g, r0) / G, p.s.causal), blk.n_end,
                             p.splits, split);
  const int n_tiles = vis.tiles;

  const KeyRows keys(p.s, p.key_idx, b, g);  // the rows of K, V and key_bias each key position reads
  const T* k_rows = static_cast<const T*>(p.k);
  const T* v_rows = static_cast<const T*>(p.v);

  // Q rows as f32 (zeros past R), gathered through the row map with head_sparse.
  const T* q = static_cast<const T*>(p.q);
  for (int e = tid; e < ROWS * D; e += THREADS) {
    const int row = e / D, x = e - row * D, r = r0 + row;
    q_s[row * STRIDE + x] = r < R ? to_f32(q[packed_row_index(p, b, g, task_row(p, b, g, r)) * D + x]) : 0.0f;
  }

  // Tile element u of this thread: key j0 + (u / kColGroups)·kRowsPass, column x0 + (u % kColGroups)·kColsPass,
  // so consecutive threads read consecutive columns of a key row and every offset beyond the
  // thread's first element is a compile-time multiple of the row stride or of kColsPass.
  constexpr int kColsPass = DMAX < THREADS ? DMAX : THREADS, kRowsPass = THREADS / kColsPass;
  constexpr int kColGroups = DMAX / kColsPass;
  const int x0 = tid % kColsPass, j0 = tid / kColsPass;
  const auto smem_at = [&](int u) { return (j0 + (u / kColGroups) * kRowsPass) * STRIDE + x0 + (u % kColGroups) * kColsPass; };
  // Element u of the tile whose first key is `first` and whose keys end at `limit`, of K or of V
  // (row stride VS, DV columns), 0 past either. A thread's elements lie in the rows of its keys
  // key + dj, each row's address taken once: without a list at multiples of the row stride from
  // the first key's row (computed past limit too, never read there), with one looked up in it,
  // below limit only.
  const auto tile_elems = [&](int first, int limit, float* k_out, float* v_out, int count) {
    const int key = first + j0;
    const int64_t first_row = keys.gathered() ? 0 : keys(key);
    const T *k_src = k_rows, *v_src = v_rows;
#pragma unroll
    for (int u = 0; u < count; ++u) {
      const int dj = (u / kColGroups) * kRowsPass, dx = (u % kColGroups) * kColsPass;
      const bool in = key + dj < limit;
      if (u % kColGroups == 0) {
        const int64_t row = keys.gathered() ? (in ? keys(key + dj) : 0) : first_row + dj;
        k_src = k_rows + row * D + x0;
        v_src = v_rows + row * VS + x0;
      }
      k_out[u] = in && x0 + dx < D ? to_f32(k_src[dx]) : 0.0f;
      if (!v_in_k) v_out[u] = in && x0 + dx < DV ? to_f32(v_src[dx]) : 0.0f;
    }
  };
  constexpr int REG = Cfg::kRegisterPrefetch ? LPT : 1;
  float k_reg[REG], v_reg[REG];
  const auto load_tile = [&](int tile) { tile_elems(vis.first(tile), vis.limit(tile), k_reg, v_reg, REG); };
  // This thread's row: position row (positions past R take the last one's keys, never stored),
  // and with head_sparse and one split its gate. Both are read before the first tile's loads are
  // in flight: read after them, the gate cost the DMAX 512 kernel 70 registers (sm_90) and the
  // row map the DMAX 128 one 13.
  const int row = r0 + ty, packed = task_row(p, b, g, min(row, R - 1)), row_pos = packed / G;
  const float gate =
      p.s.head_sparse && p.splits == 1 && row < R ? p.row_gates[packed_row_index(p, b, g, packed)] : 1.0f;
  if (Cfg::kRegisterPrefetch && n_tiles > 0) load_tile(0);

  const int row_end = visible_end(kv_len, p.s.q_len, row_pos, p.s.causal);
  const int row_begin = window_begin(p.s, row_end), row_sinks = sink_end(p.s, row_begin);
  const bool modified = attention::modifies_logits(p.s);
  const float slope = p.s.alibi ? p.alibi_slopes[g * G + packed % G] : 0.0f;
  const float query_pos = static_cast<float>(kv_len - p.s.q_len + row_pos), inv_scale = 1.0f / p.s.scale;
  float o[CPT];
#pragma unroll
  for (int c = 0; c < CPT; ++c) o[c] = 0.0f;
  float mx = kNegInf, l = 0.0f;
  const float sl2 = p.scale_log2;

  for (int t = 0; t < n_tiles; ++t) {
    __syncthreads();  // the previous tile's K, V and P are no longer read (and Q is written)
    if constexpr (Cfg::kRegisterPrefetch) {
#pragma unroll
      for (int u = 0; u < LPT; ++u) {
        k_s[smem_at(u)] = k_reg[u];
        if (!v_in_k) v_s[smem_at(u)] = v_reg[u];
      }
    } else {
      // In chunks of 8 elements per tensor: loads in flight together, few registers.
      const int first = vis.first(t), limit = vis.limit(t);
      constexpr int kChunk = 8;
      static_assert(LPT % kChunk == 0 && kChunk % kColGroups == 0, "general: whole key rows per chunk");
#pragma unroll 1
      for (int u0 = 0; u0 < LPT; u0 += kChunk) {
        float kc[kChunk], vc[kChunk];
        tile_elems(first + (u0 / kColGroups) * kRowsPass, limit, kc, vc, kChunk);
#pragma unroll
        for (int u = 0; u < kChunk; ++u) {
          k_s[smem_at(u0 + u)] = kc[u];
          if (!v_in_k) v_s[smem_at(u0 + u)] = vc[u];
        }
      }
    }
    __syncthreads();
    if (Cfg::kRegisterPrefetch && t + 1 < n_tiles) load_tile(t + 1);  // in flight during this tile's arithmetic

    float s[KPT];
#pragma unroll
    for (int k = 0; k < KPT; ++k) s[k] = 0.0f;
    const float* q_row = q_s + ty * STRIDE;
#pragma unroll 4
    for (int x = 0; x < D; ++x) {
      const float qv = q_row[x];
#pragma unroll
      for (int k = 0; k < KPT; ++k) s[k] = fmaf(qv, k_s[(tx + TX * k) * STRIDE + x], s[k]);
    }
    const int key0 = vis.first(t), limit = vis.limit(t);
    float tile_max = kNegInf, sg[KPT];
#pragma unroll
    for (int k = 0; k < KPT; ++k) {
      const int key = key0 + tx + TX * k;
      // s stays in units of the scaled score (sl2 folds the scale in): a modified logit goes back
      // through 1/scale.
      if (modified) {
        // A key past limit (masked below) takes the last one's bias: nothing past the lists and
        // biases is read, and without a predicate the DMAX 128 kernel keeps to 128 registers.
        const float bias = p.s.key_bias ? p.key_bias[keys(min(key, limit - 1))] : 0.0f;
        s[k] = final_logit(p.s, s[k] * p.s.scale, key, slope, query_pos, bias) * inv_scale;
      }
      sg[k] = p.s.signed_weights ? static_cast<float>((s[k] > 0.0f) - (s[k] < 0.0f)) : 1.0f;  // cog: softmax of |s|
      if (p.s.signed_weights) s[k] = fabsf(s[k]);
      if (key >= limit || key >= row_end || (key < row_begin && key >= row_sinks) || tree_hides(p, b, row_pos, kv_len, key))
        s[k] = kNegInf;
      tile_max = fmaxf(tile_max, s[k]);
    }
    tile_max = row_max<TX>(tile_max) * sl2;
    const float new_mx = fmaxf(mx, tile_max);
    const float base = new_mx == kNegInf ? 0.0f : new_mx;
    const float alpha = ptx::exp2_approx(mx - base);
    mx = new_mx;
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < KPT; ++k) {
      const float pv = ptx::exp2_approx(fmaf(s[k], sl2, -base));
      p_s[ty * (BN + 1) + tx + TX * k] = pv * sg[k];
      sum += pv;
    }
    l = l * alpha + sum;
#pragma unroll
    for (int c = 0; c < CPT; ++c) o[c] *= alpha;
    __syncthreads();  // P of the row visible to its TX threads (written by all of them)

    const float* p_row = p_s + ty * (BN + 1);
#pragma unroll
    for (int j = 0; j < BN; ++j) {
      const float pj = p_row[j];
      const float* v_row = pv_s + j * STRIDE + tx;
#pragma unroll
      for (int c = 0; c < CPT; ++c) o[c] = fmaf(pj, v_row[TX * c], o[c]);
    }
  }

  const float total = row_sum<TX>(l);
  if (row >= R) return;
  const int64_t idx = packed_row_index(p, b, g, packed);
  // head_sparse gates O as it is stored (gate / total: exactly 1 / total for gate 1); a split's
  // partial stays ungated, split_combine gates the merged row.
  const float inv = total > 0.0f ? gate / total : 0.0f;
  const int64_t rows_total = static_cast<int64_t>(p.s.batch) * p.s.q_heads * p.s.q_len;
  if (p.splits == 1) {
    T* out = static_cast<T*>(p.o) + idx * DV;
#pragma unroll
    for (int c = 0; c < CPT; ++c)
      if (tx + TX * c < DV) out[tx + TX * c] = from_f32<T>(o[c] * inv);
    if (tx == 0) p.lse[idx] = total > 0.0f ? natural_lse(mx, total, p) : kNegInf;
  } else {
    float* out = p.part_o + (split * rows_total + idx) * DV;
#pragma unroll
    for (int c = 0; c < CPT; ++c)
      if (tx + TX * c < DV) out[tx + TX * c] = o[c] * inv;
    if (tx == 0) p.part_lse[split * rows_total + idx] = total > 0.0f ? natural_lse(mx, total, p) : kNegInf;
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
  return launch_kernel(general_kernel<T, DMAX>, grid, dim3(Cfg::kThreads), Cfg::kSmem, stream, p);
}

}  // namespace attnbench::cuda::attn
