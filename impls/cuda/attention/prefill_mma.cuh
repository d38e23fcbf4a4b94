// Prefill attention on tensor cores (variant `mma`): FlashAttention-2's forward pass with GQA
// packing, for f16/bf16, with the window, sinks, soft-cap and ALiBi (attention_common.h): the block
// visits its sink tiles and then its window's, and masks and modifies the logits per element where
// a tile needs it. Tile widths D = 64, 128 and 256 take every key and value width up to D that is a
// multiple of 8 (MmaWidths: 40 in the 64 tile, 72 to 128 in the 128, 136 to 256 in the 256; V may
// be narrower or wider than K, rows v_stride apart), and head_sparse (moh): a CTA's rows are task
// positions of the KV head's row map, and O is scaled by the row's gate as it is stored.
//
// Grid: x = batch·kv_heads (which KV head), y = block of BM packed rows, heaviest causal block
// first (y is reversed when causal, and CTAs are dispatched in x-then-y order, so the long rows of
// every head start in the first wave and the short ones fill the tail).
//
// CTA: WARPS warps, each owning MT·16 consecutive packed rows; BM = WARPS·MT·16 = 128 rows.
//   Q tile   [BM][D]      shared, loaded once (cp.async)
//   K, V     [2][BN][D]   shared, double-buffered: tile t+1 streams in while tile t is used
// Per tile: S = Q·Kᵀ (mma m16n8k16, f32), mask (only tiles that reach past the first row's last
// visible key), online softmax in base 2, P rounded to the input type, O += P·V (mma, f32 in
// registers). Shared tiles are XOR-swizzled (kernel_common.cuh): ldmatrix and cp.async are
// bank-conflict free. The epilogue stages O through the warp's own Q rows and writes 16-byte rows.
//
//   D     warps  MT  BM   BN  shared        CTAs/SM  registers (O + S accumulators per thread)
//   64    4      2   128  64  48 KiB        2        64 + 64
//   128   4      2   128  64  96 KiB        2        128 + 64
//   256   8      1   128  64  192 KiB       1        128 + 32
#pragma once

#include "kernel_common.cuh"

namespace attnbench::cuda::attn {

template <int D>
struct PrefillConfig {
  static constexpr int kWarps = D == 256 ? 8 : 4;
  static constexpr int kMT = D == 256 ? 1 : 2;
  static constexpr int kBM = kWarps * 16 * kMT;
  static constexpr int kBN = 64;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kMinBlocks = D == 256 ? 1 : 2;
  static constexpr size_t kQBytes = static_cast<size_t>(kBM) * D * 2;
  static constexpr size_t kTileBytes = static_cast<size_t>(kBN) * D * 2;
  static constexpr size_t kSmem = kQBytes + 4 * kTileBytes;
  static_assert(D == 64 || D == 128 || D == 256, "prefill_mma: tile widths 64, 128 or 256");
};

template <typename T, int D>
__global__ void __launch_bounds__(PrefillConfig<D>::kThreads, PrefillConfig<D>::kMinBlocks)
    prefill_mma_kernel(const Params p) {
  using Cfg = PrefillConfig<D>;
  using M = ptx::Mma<T>;  // (the epilogue's packing)
  constexpr int BM = Cfg::kBM, BN = Cfg::kBN, MT = Cfg::kMT, THREADS = Cfg::kThreads;
  constexpr int NT = BN / 8;  // n8 tiles of S per row block
  constexpr int DT = D / 8;   // n8 tiles of O per row block
  const float kNegInf = neg_inf();

  ATTNBENCH_DYNAMIC_SMEM(unsigned char, smem);
  const uint32_t q_s = ptx::smem_addr(smem);
  const uint32_t k_s = q_s + static_cast<uint32_t>(Cfg::kQBytes);
  const uint32_t v_s = k_s + static_cast<uint32_t>(2 * Cfg::kTileBytes);

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int b = blockIdx.x / p.s.kv_heads, g = blockIdx.x % p.s.kv_heads;
  const int row_block = p.s.causal ? static_cast<int>(gridDim.y - 1 - blockIdx.y) : static_cast<int>(blockIdx.y);
  // Task positions [r0, r0 + BM) of the KV head's R (every packed row, or head_sparse's active ones).
  const int G = p.s.group, R = task_rows(p, b, g), r0 = row_block * BM;
  if (r0 >= R) return;  // head_sparse: past the KV head's active rows (the whole CTA, before any barrier)
  const MmaWidths widths(p.s);
  const int kv_len = p.kv_len[attention::kv_len_index(p.s, b, g)];
  // Keys any row of the block sees, and keys every row sees (tiles below it need no mask without
  // a window or changed logits). With a window the block visits its sink tiles, then its window's,
  // the gap between them skipped.
  const int n_end = visible_end(kv_len, p.s.q_len, task_row(p, b, g, min(r0 + BM, R) - 1) / G, p.s.causal);
  const int n_full = visible_end(kv_len, p.s.q_len, task_row(p, b, g, r0) / G, p.s.causal);
  const VisibleTiles<BN> vis(p.s, n_full, n_end, 1, 0);  // one split: every visible tile (kernel_common.cuh)
  const int n_tiles = vis.tiles;
  const bool masked = p.s.window > 0;  // every tile may hold keys hidden from some row
  const bool modified = attention::modifies_logits(p.s);

  const KeyRows keys(p.s, p.key_idx, b, g);
  const T* k_rows = static_cast<const T*>(p.k);
  const T* v_rows = static_cast<const T*>(p.v);
  const auto load_k = [&](uint32_t dst, int t) {
    load_kv_tile<T, D, BN, THREADS>(dst, k_rows, p.s.head_dim, widths.k_chunks, 2 * widths.k_steps, keys, vis.first(t),
                                    vis.limit(t), tid);
  };
  const auto load_v = [&](uint32_t dst, int t) {
    load_kv_tile<T, D, BN, THREADS>(dst, v_rows, p.s.v_stride, widths.v_chunks, 2 * widths.v_steps, keys, vis.first(t),
                                    vis.limit(t), tid);
  };

  // cp.async groups, oldest first: Q, K0, V0, then K(t+1), V(t+1) per iteration (empty groups at
  // the end keep the count uniform, so wait<3> means "K(t) landed" and wait<2> "V(t) landed").
  load_q_tile<T, D, BM, THREADS>(q_s, p, widths, b, g, r0, R, tid);
  ptx::cp_async_commit();
  if (n_tiles > 0) {
    load_k(k_s, 0);
    ptx::cp_async_commit();
    load_v(v_s, 0);
    ptx::cp_async_commit();
  }

  const int warp_row0 = warp * 16 * MT;  // first row of this warp within the block
  const int quad_row = lane >> 2, quad_col = 2 * (lane & 3);
  const TileLanes<D> lanes(lane);
  float o[MT][DT][4], mx[MT][2], l[MT][2];
  warp_init(o, mx, l);
  for (int t = 0; t < n_tiles; ++t) {
    const uint32_t buf = static_cast<uint32_t>(t & 1) * static_cast<uint32_t>(Cfg::kTileBytes);
    const uint32_t next = static_cast<uint32_t>((t + 1) & 1) * static_cast<uint32_t>(Cfg::kTileBytes);
    if (t + 1 < n_tiles) {
      load_k(k_s + next, t + 1);
      ptx::cp_async_commit();
      load_v(v_s + next, t + 1);
      ptx::cp_async_commit();
    } else {
      ptx::cp_async_commit();
      ptx::cp_async_commit();
    }
    ptx::cp_async_wait<3>();
    __syncthreads();  // Q and K(t) visible to every warp

    // S = Q·K(t)ᵀ for this warp's rows × BN keys.
    float s[MT][NT][4];
    warp_qk<T, D, MT, BN>(s, q_s, warp_row0, k_s + buf, lanes, widths.k_steps);

    const int key0 = vis.first(t);
    if (modified || masked || key0 + BN > min(n_full, vis.limit(t))) {
      // Some key of the tile is hidden from some row, or the logits change: per element.
      const int limit = vis.limit(t);
#pragma unroll
      for (int mi = 0; mi < MT; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          // Positions past R (zero Q, never stored) take the last one's limits.
          const int r = task_row(p, b, g, min(r0 + warp_row0 + mi * 16 + quad_row + 8 * h, R - 1));
          const int row_end = visible_end(kv_len, p.s.q_len, r / G, p.s.causal);
          const int row_begin = window_begin(p.s, row_end), row_sinks = sink_end(p.s, row_begin);
          const float slope = p.s.alibi ? p.alibi_slopes[g * G + r % G] : 0.0f;
          const float query_pos = static_cast<float>(kv_len - p.s.q_len + r / G);
#pragma unroll
          for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int j = 0; j < 2; ++j) {
              float& v = s[mi][nt][2 * h + j];
              const int key = key0 + quad_col + nt * 8 + j;
              // s is the unscaled score (scale_log2 folds the scale in): a changed logit goes
              // back through 1/scale.
              // No key bias: a decode step's (decode_mma), which the stage refuses here.
              if (modified) v = final_logit(p.s, v * p.s.scale, key, slope, query_pos, 0.0f) / p.s.scale;
              if (key >= limit || key >= row_end || (key < row_begin && key >= row_sinks)) v = kNegInf;
            }
        }
    }

    warp_softmax(s, o, mx, l, p.scale_log2);

    ptx::cp_async_wait<2>();
    __syncthreads();  // V(t) visible to every warp

    warp_pv<T, D, MT, BN>(o, s, v_s + buf, lanes, widths.v_steps);
    __syncthreads();  // every warp is done with buffer t&1 before iteration t+1 refills it
  }

  // Epilogue. No copy may still be writing shared memory (with n_tiles == 0 the Q load was never
  // waited for), and Q rows are loaded by every thread, so all must have waited.
  ptx::cp_async_wait<0>();
  __syncthreads();

  // O (v_head_dim wide; head_sparse scales it by the row's gate) is staged through the warp's own
  // rows of the Q tile, then written as 16-byte chunks.
  T* o_out = static_cast<T*>(p.o);
  const int dv = p.s.v_head_dim;
#pragma unroll
  for (int mi = 0; mi < MT; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = warp_row0 + mi * 16 + quad_row + 8 * h, r = r0 + row;
      const int64_t idx = r < R ? packed_row_index(p, b, g, task_row(p, b, g, r)) : 0;
      const float row_sum = quad_sum(l[mi][h]);
      const float gate = p.s.head_sparse && r < R ? p.row_gates[idx] : 1.0f;  // gate / sum: 1 / sum for gate 1
      const float inv = row_sum > 0.0f ? gate / row_sum : 0.0f;
#pragma unroll
      for (int dt = 0; dt < DT; ++dt) {
        if (dt >= 2 * widths.v_steps) continue;
        const uint32_t packed = M::pack(o[mi][dt][2 * h] * inv, o[mi][dt][2 * h + 1] * inv);
        *reinterpret_cast<uint32_t*>(smem + swizzle<D>(row, dt) + 2 * quad_col) = packed;
      }
      if ((lane & 3) == 0 && r < R) p.lse[idx] = row_sum > 0.0f ? natural_lse(mx[mi][h], row_sum, p) : kNegInf;
    }
  __syncwarp();
  constexpr int kChunks = D / 8;
#pragma unroll
  for (int it = 0; it < 16 * MT * kChunks / 32; ++it) {
    const int c = lane + 32 * it;
    const int row = warp_row0 + c / kChunks, ch = c % kChunks, r = r0 + row;
    if (r < R && ch < widths.v_chunks) {
      const uint4 v = *reinterpret_cast<const uint4*>(smem + swizzle<D>(row, ch));
      *reinterpret_cast<uint4*>(o_out + packed_row_index(p, b, g, task_row(p, b, g, r)) * dv + ch * 8) = v;
    }
  }
}

template <Elem E, int D>
LaunchShape prefill_mma_shape() {
  using Cfg = PrefillConfig<D>;
  return {Cfg::kBM, Cfg::kThreads, Cfg::kSmem, 0};
}

template <Elem E, int D>
cudaError_t prefill_mma_configure(int* ctas_per_sm) {
  using Cfg = PrefillConfig<D>;
  return configure_kernel(prefill_mma_kernel<typename ElemType<E>::T, D>, Cfg::kThreads, Cfg::kSmem, ctas_per_sm);
}

template <Elem E, int D>
cudaError_t prefill_mma_launch(const Params& p, cudaStream_t stream) {
  using T = typename ElemType<E>::T;
  using Cfg = PrefillConfig<D>;
  const int rows = p.s.group * p.s.q_len;
  const dim3 grid(static_cast<unsigned>(p.s.batch * p.s.kv_heads), static_cast<unsigned>((rows + Cfg::kBM - 1) / Cfg::kBM));
  return launch_kernel(prefill_mma_kernel<T, D>, grid, dim3(Cfg::kThreads), Cfg::kSmem, stream, p);
}

}  // namespace attnbench::cuda::attn
