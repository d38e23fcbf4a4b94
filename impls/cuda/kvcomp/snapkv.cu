// The SnapKV scorer on CUDA between its two logits kernels (snapkv_logits.cuh): the statistics'
// merge over the key splits, and each row's probability scale with its decay weight
// (snapkv_launch.h). Pooling, selection and the gather are the family's (kv_stages.h).
#include "snapkv_logits.cuh"

namespace attnbench::cuda::snapkv {
namespace {

__global__ void __launch_bounds__(kCombineThreads) combine_kernel(const Params p) {
  const int64_t rows = static_cast<int64_t>(p.sel.batch) * p.sel.q_heads * p.m.obs_window;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kCombineThreads + threadIdx.x;
  if (row >= rows) return;
  float m = neg_inf(), l = 0.0f;
  for (int s = 0; s < p.splits; ++s) merge_stats(m, l, p.part_m[s * rows + row], p.part_l[s * rows + row]);
  // Every window query sees the first key of its softmax (key 0, as kv_len ≥ w whenever a
  // candidate is scored; with candidate_softmax the first candidate, before tokenselect's one
  // query), so l ≥ 1 (its max contributes exp(0)).
  // The row's scale of its probabilities: 1/l, times window query i's decay weight (ZeroMerge's
  // γ^(w−1−i), kvcomp::snapkv_query_weight; 1 without decay, so weight / l = 1 / l), as the CPU's
  // weight / Σ. Rows are (b·q_heads + h)·w + i.
  const float weight = kvcomp::snapkv_query_weight(p.m, row % p.m.obs_window);
  p.row_m[row] = m;
  p.row_inv_l[row] = weight / l;
}

}  // namespace

cudaError_t combine_launch(const Params& p, cudaStream_t stream) {
  const int64_t rows = static_cast<int64_t>(p.sel.batch) * p.sel.q_heads * p.m.obs_window;
  return launch_kernel(combine_kernel, dim3(static_cast<unsigned>((rows + kCombineThreads - 1) / kCombineThreads)),
                       dim3(kCombineThreads), 0, stream, p);
}

}  // namespace attnbench::cuda::snapkv
