// Merges split-KV partials (decode_mma and general with splits > 1) into O and LSE:
//   LSE = M + log Σ_s e^(lse_s − M),  M = max_s lse_s,   O = Σ_s e^(lse_s − LSE)·O_s
// where O_s is split s's normalised output (v_head_dim wide). A row whose splits all saw no key (every lse_s = −inf)
// gives O = 0 and LSE = −inf. One warp per row; exact expf/logf (the row's figures are few). With
// head_sparse the warps take the task positions of each KV head instead (the kernels' row map),
// those past its active rows exit, and O is scaled by the row's gate.
#include "kernel_common.cuh"

namespace attnbench::cuda::attn {

namespace {

constexpr int kWarpsPerBlock = 8;

template <typename T>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) split_combine_kernel(const Params p) {
  __shared__ float weights[kWarpsPerBlock][kMaxSplits];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t rows = static_cast<int64_t>(p.s.batch) * p.s.q_heads * p.s.q_len;
  const int64_t slot = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + warp;
  if (slot >= rows) return;  // whole warps only: nothing below synchronises the block
  int64_t row = slot;
  if (p.s.head_sparse) {  // the warp takes task position pos of KV head (b, g)
    const int per_head = p.s.group * p.s.q_len;
    const int head = static_cast<int>(slot / per_head), pos = static_cast<int>(slot % per_head);
    const int b = head / p.s.kv_heads, g = head % p.s.kv_heads;
    if (pos >= task_rows(p, b, g)) return;
    row = packed_row_index(p, b, g, task_row(p, b, g, pos));
  }
  const int S = p.splits, D = p.s.v_head_dim;  // O's rows are v_head_dim wide
  const float kNegInf = neg_inf();

  float m = kNegInf;
  for (int s = lane; s < S; s += 32) m = fmaxf(m, p.part_lse[s * rows + row]);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  float sum = 0.0f;
  for (int s = lane; s < S; s += 32) {
    const float lse = p.part_lse[s * rows + row];
    const float w = m == kNegInf ? 0.0f : expf(lse - m);  // e^(−inf) = 0 for an empty split
    weights[warp][s] = w;
    sum += w;
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  __syncwarp();  // weights written by every lane, read by every lane

  const float gate = p.s.head_sparse ? p.row_gates[row] : 1.0f;  // gate / sum: exactly 1 / sum for gate 1
  const float inv = sum > 0.0f ? gate / sum : 0.0f;
  T* out = static_cast<T*>(p.o) + row * D;
  for (int x = lane; x < D; x += 32) {
    float acc = 0.0f;
    for (int s = 0; s < S; ++s) acc = fmaf(weights[warp][s], p.part_o[(s * rows + row) * D + x], acc);
    out[x] = from_f32<T>(acc * inv);
  }
  if (lane == 0) p.lse[row] = sum > 0.0f ? m + logf(sum) : kNegInf;
}

}  // namespace

template <Elem E>
cudaError_t split_combine_launch(const Params& p, cudaStream_t stream) {
  using T = typename ElemType<E>::T;
  const int64_t rows = static_cast<int64_t>(p.s.batch) * p.s.q_heads * p.s.q_len;
  const auto blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  return launch_kernel(split_combine_kernel<T>, dim3(blocks), dim3(kWarpsPerBlock * 32), 0, stream, p);
}

template cudaError_t split_combine_launch<Elem::f32>(const Params&, cudaStream_t);
template cudaError_t split_combine_launch<Elem::f16>(const Params&, cudaStream_t);
template cudaError_t split_combine_launch<Elem::bf16>(const Params&, cudaStream_t);

}  // namespace attnbench::cuda::attn
