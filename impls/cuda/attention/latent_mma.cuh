// MLA's absorbed attention on tensor cores (variant `mma`), FlashMLA's decode done with mma.sync:
// the query heads of a KV head attend over latent rows that are at once the key (head_dim up to
// 576: DeepSeek-V3's 512-dim latent c_t and 64-dim rotary key) and, in their first v_head_dim
// (up to 512) elements, the value, so one shared tile of each key serves Q·Kᵀ and P·V. V must be
// read inside K's rows (v_stride = head_dim, V the K buffer); the window, sinks, soft-cap, ALiBi,
// signed weights and head_sparse are not taken (attention_stage.cpp says why). Both phases: prefill
// masks the bottom-right causal diagonal as prefill_mma does. Split-KV as decode_mma's (the same
// SplitBlock and VisibleTiles), merged by split_combine.
//
// Grid: x = row block × split, y = KV head, z = batch. CTA: 8 warps, BM = 64 packed rows (GQA
// packing, attention_launch.h), BN = 64 keys per tile. The warps form four pairs, pair i owning
// rows 16i..16i+15; of a pair, warp `half` computes S for the tile's keys 32·half..+31 over the
// whole key width (4 n8 tiles, 36 k16 steps at 576) and accumulates O for columns
// 256·half..+255 (32 n8 tiles, 128 registers). Per tile:
//   S (half the keys) → mask → row max, exchanged within the pair (named barrier) → online softmax
//   with the pair's common max (both warps rescale by the same alpha) → P rounded to T into a
//   shared [BM][BN] tile → named barrier → O += P·V, P's A fragments by ldmatrix from that tile,
//   V's B fragments transposed from the K tile's first 512 columns.
// Each warp keeps the sum of its own keys' exponentials; the pair adds the two at the end.
//
// Shared memory (bytes): Q [64][576] 73728, K [2][64][576] 147456 (cp.async double buffering: key
// tile t+1 streams in during tile t), P [64][64] 8192, the pairs' row maxima and sums 1024: 230400,
// within sm_90's 227 KiB opt-in; one CTA per SM. The epilogue stages O in f32 over Q and K (rows
// padded to 520 floats) and writes 16-byte pieces of rows.
#pragma once

#include "kernel_common.cuh"

namespace attnbench::cuda::attn {

struct LatentConfig {
  static constexpr int kDK = 576, kDV = 512;  // tile widths of the key (and latent row) and the value
  static constexpr int kWarps = 8, kThreads = kWarps * 32;
  static constexpr int kBM = 64, kBN = 64;
  static constexpr int kPairs = kBM / 16;
  static constexpr int kKeysPerWarp = kBN / 2, kColsPerWarp = kDV / 2;
  static constexpr int kChunks = kDK / 8;  // 16-byte chunks of a row
  static constexpr size_t kQBytes = static_cast<size_t>(kBM) * kDK * 2;
  static constexpr size_t kTileBytes = static_cast<size_t>(kBN) * kDK * 2;
  static constexpr size_t kPOffset = kQBytes + 2 * kTileBytes;
  static constexpr size_t kXOffset = kPOffset + static_cast<size_t>(kBM) * kBN * 2;
  static constexpr size_t kXFloats = static_cast<size_t>(kPairs) * 2 * 16;  // [pair][half][row], max then sum
  static constexpr size_t kSmem = kXOffset + 2 * kXFloats * 4;
  static constexpr int kStageStride = kDV + 8;  // f32 O rows in the epilogue: conflict-free float2 stores
  static_assert(static_cast<size_t>(kBM) * kStageStride * 4 <= kPOffset, "latent_mma: O staging overlaps P");
  static_assert(kBM * kChunks % kThreads == 0 && kBN * kChunks % kThreads == 0, "latent_mma: uneven tile loads");
  static_assert(kSmem <= 227 * 1024, "latent_mma: shared memory above the sm_90 opt-in limit");
};

template <typename T>
__global__ void __launch_bounds__(LatentConfig::kThreads, 1) latent_mma_kernel(const Params p) {
  using Cfg = LatentConfig;
  using M = ptx::Mma<T>;
  constexpr int DK = Cfg::kDK, BM = Cfg::kBM, BN = Cfg::kBN, THREADS = Cfg::kThreads, CHUNKS = Cfg::kChunks;
  constexpr int NT = Cfg::kKeysPerWarp / 8;  // n8 tiles of S per warp
  constexpr int DT = Cfg::kColsPerWarp / 8;  // n8 tiles of O per warp
  const float kNegInf = neg_inf();

  ATTNBENCH_DYNAMIC_SMEM(unsigned char, smem);
  const uint32_t q_s = ptx::smem_addr(smem);
  const uint32_t k_s = q_s + static_cast<uint32_t>(Cfg::kQBytes);
  const uint32_t p_s = q_s + static_cast<uint32_t>(Cfg::kPOffset);
  float* x_max = reinterpret_cast<float*>(smem + Cfg::kXOffset);  // [pair][half][16]
  float* x_sum = x_max + Cfg::kXFloats;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, pair = warp >> 1, half = warp & 1;
  const SplitBlock<BM> blk(p);
  const int split = blk.split, g = blk.g, b = blk.b, G = p.s.group, R = blk.R, r0 = blk.r0, kv_len = blk.kv_len;
  if (r0 >= R) return;
  const MmaWidths widths(p.s);
  const int d = p.s.head_dim, k_fill = 2 * widths.k_steps;
  const int first_row_end = visible_end(kv_len, p.s.q_len, task_row(p, b, g, r0) / G, p.s.causal);
  const VisibleTiles<BN> vis(p.s, first_row_end, blk.n_end, p.splits, split);
  const int n_tiles = vis.tiles;
  const T* k_head = static_cast<const T*>(p.k) + (static_cast<int64_t>(b) * p.s.kv_heads + g) * p.s.kv_cap * d;

  // A [64][DK] tile (Q's rows or a key tile): chunk e is row e / CHUNKS, chunk e % CHUNKS. row_at(row)
  // is the row's first element, or null past the valid rows, which are zero-filled without a read
  // (cp.async still wants a mapped address: `any`); chunks past the key's own are zero-filled up
  // to its padded width and never written beyond it.
  static_assert(BM == BN, "latent_mma: Q and key tiles share one loader");
  const auto load_tile = [&](uint32_t dst, const auto& row_at, const T* any) {
#pragma unroll
    for (int i = 0; i < BM * CHUNKS / THREADS; ++i) {
      const int e = tid + i * THREADS, row = e / CHUNKS, ch = e - row * CHUNKS;
      if (ch >= k_fill) continue;
      const T* src = row_at(row);
      const bool ok = src != nullptr && ch < widths.k_chunks;
      ptx::cp_async_16(dst + swizzle<DK>(row, ch), ok ? src + ch * 8 : any, ok);
    }
  };
  const T* q = static_cast<const T*>(p.q);
  load_tile(
      q_s, [&](int row) { return r0 + row < R ? q + packed_row_index(p, b, g, task_row(p, b, g, r0 + row)) * d : nullptr; },
      q);
  const auto load_k = [&](uint32_t dst, int t) {
    const int key0 = vis.first(t), limit = vis.limit(t);
    load_tile(
        dst, [&](int row) { return key0 + row < limit ? k_head + static_cast<int64_t>(key0 + row) * d : nullptr; },
        k_head + static_cast<int64_t>(key0) * d);
  };
  // cp.async groups, oldest first: Q, K0, then K(t+1) per iteration (empty past the last), so
  // wait<1> at iteration t means "Q and K(t) landed".
  ptx::cp_async_commit();
  if (n_tiles > 0) load_k(k_s, 0);
  ptx::cp_async_commit();

  const int row0 = pair * 16;  // the pair's rows within the block
  const int quad_row = lane >> 2, quad_col = 2 * (lane & 3);
  const TileLanes<DK> lanes(lane);
  const LdsmLane<BN> p_lane(lane & 15, lane >> 4);  // P's A fragments, as Q's
  int row_end[2];  // the keys each of the thread's two rows sees (positions past R take the last one's)
#pragma unroll
  for (int h = 0; h < 2; ++h)
    row_end[h] = visible_end(kv_len, p.s.q_len, task_row(p, b, g, min(r0 + row0 + quad_row + 8 * h, R - 1)) / G,
                             p.s.causal);
  float* my_max = x_max + (pair * 2 + half) * 16;
  const float* pair_max = x_max + pair * 2 * 16;

  float o[1][DT][4], mx[1][2], l[1][2];
  warp_init(o, mx, l);
  for (int t = 0; t < n_tiles; ++t) {
    const uint32_t buf = k_s + static_cast<uint32_t>(t & 1) * static_cast<uint32_t>(Cfg::kTileBytes);
    if (t + 1 < n_tiles) load_k(k_s + static_cast<uint32_t>((t + 1) & 1) * static_cast<uint32_t>(Cfg::kTileBytes), t + 1);
    ptx::cp_async_commit();
    ptx::cp_async_wait<1>();
    __syncthreads();  // Q and K(t) visible to every warp

    // S = Q·Kᵀ for the pair's 16 rows × this warp's 32 keys (rows 32·half.. of the tile share the
    // swizzle of rows 0..: 32 is a multiple of 8).
    float s[1][NT][4];
    warp_qk<T, DK, 1, Cfg::kKeysPerWarp>(s, q_s, row0, buf + static_cast<uint32_t>(half * Cfg::kKeysPerWarp * DK * 2), lanes,
                                         widths.k_steps);
    const int key0 = vis.first(t) + half * Cfg::kKeysPerWarp, limit = vis.limit(t);
    if (key0 + Cfg::kKeysPerWarp > min(first_row_end, limit)) {  // some of its keys hidden from some row
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int key = key0 + nt * 8 + quad_col + (c & 1);
          if (key >= limit || key >= row_end[c >> 1]) s[0][nt][c] = kNegInf;
        }
    }

    // The pair's common row max: both warps then rescale l and their halves of O alike.
    float tile_max[1][2];
    warp_tile_max(s, tile_max);
    if ((lane & 3) == 0) {
      my_max[quad_row] = tile_max[0][0];
      my_max[quad_row + 8] = tile_max[0][1];
    }
    ptx::named_barrier(1 + pair, 64);
#pragma unroll
    for (int h = 0; h < 2; ++h) tile_max[0][h] = fmaxf(pair_max[quad_row + 8 * h], pair_max[16 + quad_row + 8 * h]);
    warp_softmax_at(s, o, mx, l, tile_max, p.scale_log2);

    // P (rounded to T) into the pair's rows of the P tile, at this warp's key columns.
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row0 + quad_row + 8 * h, chunk = half * NT + nt;
        *reinterpret_cast<uint32_t*>(smem + Cfg::kPOffset + swizzle<BN>(row, chunk) + 2 * quad_col) =
            M::pack(s[0][nt][2 * h], s[0][nt][2 * h + 1]);
      }
    ptx::named_barrier(1 + pair, 64);  // both halves of the pair's P written

    // O += P·V for this warp's 256 columns: V is the first 512 columns of the K tile, whose column
    // step 16·half + dp starts 512·half bytes into a row (a multiple of 8 chunks: same swizzle).
    const uint32_t v_tile = buf + static_cast<uint32_t>(half * Cfg::kColsPerWarp * 2);
#pragma unroll
    for (int kj = 0; kj < BN / 16; ++kj) {
      uint32_t a[4];
      ptx::ldsm_x4(p_s + p_lane.at(row0, kj), a[0], a[1], a[2], a[3]);
#pragma unroll
      for (int dp = 0; dp < DT / 2; ++dp) {
        if (half * (DT / 2) + dp >= widths.v_steps) continue;  // past the value's width
        uint32_t b0, b1, b2, b3;
        ptx::ldsm_x4_trans(v_tile + lanes.a.at(16 * kj, dp), b0, b1, b2, b3);
        M::run(o[0][2 * dp], a, b0, b1);
        M::run(o[0][2 * dp + 1], a, b2, b3);
      }
    }
    __syncthreads();  // every warp is done with K buffer t&1 and with P before they are rewritten
  }

  // Epilogue: the pair's two partial sums give each row's; O is staged in f32 over Q and K.
  ptx::cp_async_wait<0>();  // with n_tiles == 0 the Q load was never waited for
  float* my_sum = x_sum + (pair * 2 + half) * 16;
  const float* pair_sum = x_sum + pair * 2 * 16;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float sum = quad_sum(l[0][h]);
    if ((lane & 3) == 0) my_sum[quad_row + 8 * h] = sum;
  }
  __syncthreads();  // the sums written; no warp reads Q, K or P any more

  const int64_t rows_total = static_cast<int64_t>(p.s.batch) * p.s.q_heads * p.s.q_len;
  float* stage = reinterpret_cast<float*>(smem);  // [BM][kStageStride]
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + quad_row + 8 * h, r = r0 + row;
    const float total = pair_sum[quad_row + 8 * h] + pair_sum[16 + quad_row + 8 * h];  // the same order in both warps
    const float inv = total > 0.0f ? 1.0f / total : 0.0f;
    float* dst = stage + row * Cfg::kStageStride + half * Cfg::kColsPerWarp + quad_col;
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
      if (half * DT + dt < 2 * widths.v_steps) store_pair(dst + dt * 8, o[0][dt][2 * h] * inv, o[0][dt][2 * h + 1] * inv);
    if (half == 0 && (lane & 3) == 0 && r < R) {
      const int64_t idx = packed_row_index(p, b, g, task_row(p, b, g, r));
      const float lse = total > 0.0f ? natural_lse(mx[0][h], total, p) : kNegInf;
      if (p.splits == 1) p.lse[idx] = lse;
      else p.part_lse[split * rows_total + idx] = lse;
    }
  }
  __syncthreads();

  const int dv = p.s.v_head_dim, quads = dv / 4;
  for (int e = tid; e < BM * quads; e += THREADS) {
    const int row = e / quads, x = 4 * (e - row * quads), r = r0 + row;
    if (r >= R) continue;
    const float4 v = *reinterpret_cast<const float4*>(stage + row * Cfg::kStageStride + x);
    const int64_t idx = packed_row_index(p, b, g, task_row(p, b, g, r));
    if (p.splits == 1) {
      T* out = static_cast<T*>(p.o) + idx * dv + x;
      store_pair(out, v.x, v.y);
      store_pair(out + 2, v.z, v.w);
    } else {
      *reinterpret_cast<float4*>(p.part_o + (split * rows_total + idx) * dv + x) = v;
    }
  }
}

template <Elem E>
LaunchShape latent_mma_shape() {
  using Cfg = LatentConfig;
  // A split shorter than two tiles leaves the double buffer idle.
  return {Cfg::kBM, Cfg::kThreads, Cfg::kSmem, 2 * Cfg::kBN};
}

template <Elem E>
cudaError_t latent_mma_configure(int* ctas_per_sm) {
  using Cfg = LatentConfig;
  return configure_kernel(latent_mma_kernel<typename ElemType<E>::T>, Cfg::kThreads, Cfg::kSmem, ctas_per_sm);
}

template <Elem E>
cudaError_t latent_mma_launch(const Params& p, int row_blocks, cudaStream_t stream) {
  using T = typename ElemType<E>::T;
  using Cfg = LatentConfig;
  const dim3 grid(static_cast<unsigned>(row_blocks * p.splits), static_cast<unsigned>(p.s.kv_heads),
                  static_cast<unsigned>(p.s.batch));
  return launch_kernel(latent_mma_kernel<T>, grid, dim3(Cfg::kThreads), Cfg::kSmem, stream, p);
}

}  // namespace attnbench::cuda::attn
