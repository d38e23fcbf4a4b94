// Decode attention on tensor cores (variant `mma`): split-KV (flash-decoding) with GQA packing,
// for f16/bf16, with the window, sinks, soft-cap, ALiBi and key bias (attention_common.h; the
// splits share the window's keys, the sink tiles go with split 0), and gathered keys: the positions
// are then a list's, each tile row's address looked up in it (KeyRows). Tile widths D = 64, 128
// and 256 take every key and value width up to D that is a multiple of 8 (MmaWidths, as
// prefill_mma), and head_sparse: a CTA's rows are task positions of the KV head's row map, O
// scaled by the row's gate (by split_combine when the keys are split). Memory-bound: the design
// goal is to keep HBM busy.
//
// Grid: x = row block × split, y = KV head, z = batch. A CTA takes RM = 16·MT packed rows (the
// G query heads × q_len queries of one KV head, so each K/V byte is read once per group) and one
// split of the keys those rows see. Splits divide each sequence's own visible length evenly
// (in whole warp tiles), so ragged batches balance within a sequence.
//
// Inside the CTA every warp streams its own key tiles (tile w, w + WARPS, ...) through a private
// STAGES-deep cp.async pipeline: no CTA-wide barrier in the main loop, two tiles of 16-byte
// coalesced loads in flight per warp. Each warp keeps its own online softmax over the CTA's rows;
// at the end the warps' (max, sum, O) merge in shared memory, and the CTA writes O and LSE
// (one split) or a normalised partial O and its LSE for split_combine.
//
//   D     warps  TN (keys/warp tile)  stages  shared (MT = 2)  CTAs/SM
//   64    8      32                   3       196 KiB          1
//   128   8      16                   3       200 KiB          1
//   256   4      16                   3       200 KiB (MT = 1) 1
#pragma once

#include "kernel_common.cuh"

namespace attnbench::cuda::attn {

template <int D, int MT>
struct DecodeConfig {
  static constexpr int kWarps = D == 256 ? 4 : 8;
  static constexpr int kRM = 16 * MT;
  static constexpr int kTN = D == 64 ? 32 : 16;
  static constexpr int kStages = 3;
  static constexpr int kThreads = kWarps * 32;
  static constexpr size_t kQBytes = static_cast<size_t>(kRM) * D * 2;
  static constexpr size_t kTileBytes = static_cast<size_t>(kTN) * D * 2;  // one K or V tile
  static constexpr size_t kStageBytes = 2 * kTileBytes;
  static constexpr size_t kWarpBytes = kStages * kStageBytes;
  static constexpr size_t kMainBytes = kQBytes + kWarps * kWarpBytes;
  // Warp merge: O rows padded by 8 floats (conflict-free float2 stores), then max, sum, weight, and
  // each row's output index.
  static constexpr int kRedStride = D + 8;
  static constexpr size_t kRedBytes = static_cast<size_t>(kWarps) * kRM * (kRedStride + 3) * 4 + kRM * 8;
  static constexpr size_t kSmem = kMainBytes > kRedBytes ? kMainBytes : kRedBytes;
  static_assert(D == 64 || D == 128 || D == 256, "decode_mma: tile widths 64, 128 or 256");
  static_assert(MT == 1 || MT == 2, "decode_mma: one or two 16-row tiles");
  static_assert(kSmem <= 227 * 1024, "decode_mma: shared memory above the sm_90 opt-in limit");
};

template <typename T, int D, int MT>
__global__ void __launch_bounds__(DecodeConfig<D, MT>::kThreads, 1) decode_mma_kernel(const Params p) {
  using Cfg = DecodeConfig<D, MT>;
  constexpr int RM = Cfg::kRM, TN = Cfg::kTN, WARPS = Cfg::kWarps, STAGES = Cfg::kStages;
  constexpr int NT = TN / 8, DT = D / 8;
  const float kNegInf = neg_inf();

  ATTNBENCH_DYNAMIC_SMEM(unsigned char, smem);
  const uint32_t q_s = ptx::smem_addr(smem);

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const SplitBlock<RM> blk(p);
  const int split = blk.split, g = blk.g, b = blk.b, G = p.s.group, R = blk.R, r0 = blk.r0, kv_len = blk.kv_len;
  if (r0 >= R) return;  // head_sparse: past the KV head's active rows (the whole CTA, before any barrier)
  const MmaWidths widths(p.s);
  // The sink tiles (split 0), then this split's share of the window's (kernel_common.cuh).
  const VisibleTiles<TN> vis(p.s, visible_end(kv_len, p.s.q_len, task_row(p, b, g, r0) / G, p.s.causal), blk.n_end,
                             p.splits, split);
  const int n_tiles = vis.tiles;
  const int my_tiles = n_tiles > warp ? (n_tiles - warp + WARPS - 1) / WARPS : 0;  // tiles warp, warp+WARPS, ...

  const KeyRows keys(p.s, p.key_idx, b, g);  // the rows of K, V and key_bias each key position reads
  const T* k_rows = static_cast<const T*>(p.k);
  const T* v_rows = static_cast<const T*>(p.v);
  const uint32_t pipe = q_s + static_cast<uint32_t>(Cfg::kQBytes + warp * Cfg::kWarpBytes);
  const auto load_tile = [&](int k) {  // this warp's k-th tile into stage k % STAGES
    const int tile = warp + k * WARPS, key0 = vis.first(tile), limit = vis.limit(tile);
    const uint32_t stage = pipe + static_cast<uint32_t>((k % STAGES) * Cfg::kStageBytes);
    load_kv_tile<T, D, TN, 32>(stage, k_rows, p.s.head_dim, widths.k_chunks, 2 * widths.k_steps, keys, key0, limit, lane);
    load_kv_tile<T, D, TN, 32>(stage + static_cast<uint32_t>(Cfg::kTileBytes), v_rows, p.s.v_stride, widths.v_chunks,
                               2 * widths.v_steps, keys, key0, limit, lane);
  };

  // Groups, oldest first: Q (every thread's share), then one per tile (empty past the last).
  load_q_tile<T, D, RM, Cfg::kThreads>(q_s, p, widths, b, g, r0, R, tid);
  ptx::cp_async_commit();
#pragma unroll
  for (int k = 0; k < STAGES - 1; ++k) {
    if (k < my_tiles) load_tile(k);
    ptx::cp_async_commit();
  }
  ptx::cp_async_wait<STAGES - 1>();  // this thread's share of Q has landed
  __syncthreads();                   // and everyone's

  const int quad_row = lane >> 2, quad_col = 2 * (lane & 3);
  const TileLanes<D> lanes(lane);
  // The thread's rows: the keys each sees ([0, row_sinks) ∪ [row_begin, row_end)), and what its
  // logits need (ALiBi's slope and the query's position).
  int row_end[MT][2], row_begin[MT][2], row_sinks[MT][2], row_pos[MT][2];
  float slope[MT][2], query_pos[MT][2];
#pragma unroll
  for (int mi = 0; mi < MT; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = task_row(p, b, g, min(r0 + mi * 16 + quad_row + 8 * h, R - 1));
      row_pos[mi][h] = r / G;
      row_end[mi][h] = visible_end(kv_len, p.s.q_len, r / G, p.s.causal);
      row_begin[mi][h] = window_begin(p.s, row_end[mi][h]);
      row_sinks[mi][h] = sink_end(p.s, row_begin[mi][h]);
      slope[mi][h] = p.s.alibi ? p.alibi_slopes[g * G + r % G] : 0.0f;
      query_pos[mi][h] = static_cast<float>(kv_len - p.s.q_len + r / G);
    }
  const bool modified = attention::modifies_logits(p.s);
  const float inv_scale = 1.0f / p.s.scale;

  float o[MT][DT][4], mx[MT][2], l[MT][2];
  warp_init(o, mx, l);
  for (int k = 0; k < my_tiles; ++k) {
    if (k + STAGES - 1 < my_tiles) load_tile(k + STAGES - 1);
    ptx::cp_async_commit();
    ptx::cp_async_wait<STAGES - 1>();
    __syncwarp();  // the tile's chunks, loaded by all lanes, visible to all lanes
    const uint32_t k_st = pipe + static_cast<uint32_t>((k % STAGES) * Cfg::kStageBytes);
    const uint32_t v_st = k_st + static_cast<uint32_t>(Cfg::kTileBytes);
    const int tile = warp + k * WARPS, key0 = vis.first(tile), limit = vis.limit(tile);

    float s[MT][NT][4];
    warp_qk<T, D, MT, TN>(s, q_s, 0, k_st, lanes, widths.k_steps);

    // Per key of the thread's columns (its bias, with key_bias, read once for all its rows; none
    // past the tile's limit, where the lists and biases end), then per row.
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int key = key0 + nt * 8 + quad_col + j;
        const float bias = p.s.key_bias && key < limit ? p.key_bias[keys(key)] : 0.0f;
#pragma unroll
        for (int mi = 0; mi < MT; ++mi)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            float& v = s[mi][nt][2 * h + j];
            // s stays in units of the unscaled score (scale_log2 folds the scale in): a modified
            // logit goes back through 1/scale.
            if (modified) v = final_logit(p.s, v * p.s.scale, key, slope[mi][h], query_pos[mi][h], bias) * inv_scale;
            if (key >= limit || key >= row_end[mi][h] || (key < row_begin[mi][h] && key >= row_sinks[mi][h]) ||
                tree_hides(p, b, row_pos[mi][h], kv_len, key))
              v = kNegInf;
          }
      }

    warp_softmax(s, o, mx, l, p.scale_log2);
    warp_pv<T, D, MT, TN>(o, s, v_st, lanes, widths.v_steps);
    __syncwarp();  // all lanes done with this stage before a later iteration refills it
  }

  // Merge the warps. The pipeline's shared memory is reused, so every copy must have landed and
  // every warp must be past its loop.
  ptx::cp_async_wait<0>();
  __syncthreads();
  float* red_o = reinterpret_cast<float*>(smem);                   // [WARPS][RM][kRedStride]
  float* red_mx = red_o + WARPS * RM * Cfg::kRedStride;            // [WARPS][RM]
  float* red_l = red_mx + WARPS * RM;                              // [WARPS][RM]
  float* weight = red_l + WARPS * RM;                              // [WARPS][RM]
#pragma unroll
  for (int mi = 0; mi < MT; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = mi * 16 + quad_row + 8 * h;
      const float row_sum = quad_sum(l[mi][h]);
      float* dst = red_o + (warp * RM + row) * Cfg::kRedStride + quad_col;
#pragma unroll
      for (int dt = 0; dt < DT; ++dt)
        if (dt < 2 * widths.v_steps) store_pair(dst + dt * 8, o[mi][dt][2 * h], o[mi][dt][2 * h + 1]);
      if ((lane & 3) == 0) {
        red_mx[warp * RM + row] = mx[mi][h];
        red_l[warp * RM + row] = row_sum;
      }
    }
  __syncthreads();

  const int64_t rows_total = static_cast<int64_t>(p.s.batch) * p.s.q_heads * p.s.q_len;
  // Each row's O and LSE index, and with one split the gate O is scaled by (split_combine gates the
  // merged row otherwise).
  int64_t* row_idx = reinterpret_cast<int64_t*>(weight + WARPS * RM);  // [RM] (8-byte aligned: WARPS·RM is even)
  if (tid < RM) {
    const int row = tid;
    float m = kNegInf;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) m = fmaxf(m, red_mx[w * RM + row]);
    const float base = m == kNegInf ? 0.0f : m;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) sum += red_l[w * RM + row] * exp2f(red_mx[w * RM + row] - base);
    const int r = r0 + row;
    const int64_t idx = r < R ? packed_row_index(p, b, g, task_row(p, b, g, r)) : 0;
    const float gate = p.s.head_sparse && p.splits == 1 && r < R ? p.row_gates[idx] : 1.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w)
      weight[w * RM + row] = sum > 0.0f ? exp2f(red_mx[w * RM + row] - base) / sum * gate : 0.0f;
    row_idx[row] = idx;
    if (r < R) {
      const float lse = sum > 0.0f ? natural_lse(m, sum, p) : kNegInf;
      if (p.splits == 1) p.lse[idx] = lse;
      else p.part_lse[split * rows_total + idx] = lse;
    }
  }
  __syncthreads();

  const int dv = p.s.v_head_dim, half_dv = dv / 2;
  for (int e = tid; e < RM * half_dv; e += Cfg::kThreads) {
    const int row = e / half_dv, x = 2 * (e - row * half_dv), r = r0 + row;
    if (r >= R) continue;
    float acc0 = 0.0f, acc1 = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
      const float wt = weight[w * RM + row];
      const float2 v = *reinterpret_cast<const float2*>(red_o + (w * RM + row) * Cfg::kRedStride + x);
      acc0 = fmaf(wt, v.x, acc0);
      acc1 = fmaf(wt, v.y, acc1);
    }
    const int64_t idx = row_idx[row];
    if (p.splits == 1) store_pair(static_cast<T*>(p.o) + idx * dv + x, acc0, acc1);
    else store_pair(p.part_o + (split * rows_total + idx) * dv + x, acc0, acc1);
  }
}

template <Elem E, int D, int MT>
LaunchShape decode_mma_shape() {
  using Cfg = DecodeConfig<D, MT>;
  // A split shorter than two tiles per warp leaves the pipeline empty most of the time.
  return {Cfg::kRM, Cfg::kThreads, Cfg::kSmem, 2 * Cfg::kWarps * Cfg::kTN};
}

template <Elem E, int D, int MT>
cudaError_t decode_mma_configure(int* ctas_per_sm) {
  using Cfg = DecodeConfig<D, MT>;
  return configure_kernel(decode_mma_kernel<typename ElemType<E>::T, D, MT>, Cfg::kThreads, Cfg::kSmem, ctas_per_sm);
}

template <Elem E, int D, int MT>
cudaError_t decode_mma_launch(const Params& p, int row_blocks, cudaStream_t stream) {
  using T = typename ElemType<E>::T;
  using Cfg = DecodeConfig<D, MT>;
  const dim3 grid(static_cast<unsigned>(row_blocks * p.splits), static_cast<unsigned>(p.s.kv_heads),
                  static_cast<unsigned>(p.s.batch));
  return launch_kernel(decode_mma_kernel<T, D, MT>, grid, dim3(Cfg::kThreads), Cfg::kSmem, stream, p);
}

}  // namespace attnbench::cuda::attn
