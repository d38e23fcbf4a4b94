// head_sparse's first pass (attention_launch.h map_rows_launch; attention_common.h): one CTA per
// (batch, KV head) compacts the KV head's active rows, those whose gate is not 0, into its row map
// in packed order, and writes each skipped row's O = 0 and LSE = −inf. The attention kernels then
// cover the positions below the count only.
//
// The CTA walks the packed rows in chunks: each thread takes kItems consecutive rows (their gate
// loads in flight together), a scan of the threads' counts (within the warp by shuffles, across
// warps in shared memory) places its active rows, so the map's order is the rows' own whatever the
// timing. A skipped row's O is zeroed by its warp, a lane per column.
#include "kernel_common.cuh"

namespace attnbench::cuda::attn {
namespace {

constexpr int kMapWarps = 8, kMapThreads = kMapWarps * 32, kItems = 8, kChunk = kMapThreads * kItems;

template <typename T>
__global__ void __launch_bounds__(kMapThreads) map_rows_kernel(const Params p) {
  __shared__ int warp_active[kMapWarps];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int head = blockIdx.x, b = head / p.s.kv_heads, g = head % p.s.kv_heads;
  const int R = p.s.group * p.s.q_len, DV = p.s.v_head_dim;
  int32_t* map = p.row_map + static_cast<int64_t>(head) * R;
  int count = 0;  // active rows of the chunks before this one
  for (int r0 = 0; r0 < R; r0 += kChunk) {
    const int first = r0 + static_cast<int>(threadIdx.x) * kItems;
    int64_t row[kItems];
    bool active[kItems];
    int mine = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const bool in = first + k < R;
      row[k] = in ? packed_row_index(p, b, g, first + k) : 0;
      active[k] = in && p.row_gates[row[k]] != 0.0f;
      mine += active[k];
    }
    int scan = mine;  // inclusive, over the warp's lanes
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const int v = __shfl_up_sync(0xffffffffu, scan, off);
      if (lane >= off) scan += v;
    }
    if (lane == 31) warp_active[warp] = scan;
    __syncthreads();
    int pos = count + scan - mine, chunk = 0;
#pragma unroll
    for (int w = 0; w < kMapWarps; ++w) {
      pos += w < warp ? warp_active[w] : 0;
      chunk += warp_active[w];
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      if (active[k]) map[pos++] = first + k;
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      for (unsigned skipped = __ballot_sync(0xffffffffu, first + k < R && !active[k]); skipped; skipped &= skipped - 1) {
        const int64_t s_row = __shfl_sync(0xffffffffu, row[k], __ffs(skipped) - 1);
        T* out = static_cast<T*>(p.o) + s_row * DV;
        for (int x = lane; x < DV; x += 32) out[x] = from_f32<T>(0.0f);
        if (lane == 0) p.lse[s_row] = neg_inf();
      }
    count += chunk;
    __syncthreads();  // the next chunk rewrites warp_active
  }
  if (threadIdx.x == 0) p.row_count[head] = count;
}

}  // namespace

template <Elem E>
cudaError_t map_rows_launch(const Params& p, cudaStream_t stream) {
  using T = typename ElemType<E>::T;
  const int64_t heads = int64_t{p.s.batch} * p.s.kv_heads;
  if (heads == 0) return cudaSuccess;
  return launch_kernel(map_rows_kernel<T>, dim3(static_cast<unsigned>(heads)), dim3(kMapThreads), 0, stream, p);
}

template cudaError_t map_rows_launch<Elem::f32>(const Params&, cudaStream_t);
template cudaError_t map_rows_launch<Elem::f16>(const Params&, cudaStream_t);
template cudaError_t map_rows_launch<Elem::bf16>(const Params&, cudaStream_t);

}  // namespace attnbench::cuda::attn
