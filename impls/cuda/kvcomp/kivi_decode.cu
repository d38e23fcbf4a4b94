// kivi_decode's split combine on CUDA (kivi_decode_launch.h): the decode kernel's splits
// (kivi_decode.cuh) merged into O and LSE, one CTA per query row. A split that held no keys has
// l = 0 and is skipped (its max is −inf); the rest weigh in with e^(m_s − M), M their largest max:
//   O = Σ_s e^(m_s − M)·o_s / L,  LSE = M + log L,  L = Σ_s e^(m_s − M)·l_s,
// summed in split order (the same bits on every run); O = 0 and LSE = −inf for an empty sequence.
#include "kivi_decode.cuh"

namespace attnbench::cuda::kivi {
namespace {

template <Elem E>
__global__ void __launch_bounds__(kCombineThreads) combine_kernel(const Args a) {
  __shared__ float weight[kMaxSplits];
  const int S = a.splits, D = a.s.head_dim;
  const int64_t row = blockIdx.x;
  const float* ml = a.part_ml + row * S * 2;
  float mx = neg_inf();
  for (int i = 0; i < S; ++i)
    if (ml[2 * i + 1] > 0.0f) mx = fmaxf(mx, ml[2 * i]);
  for (int i = static_cast<int>(threadIdx.x); i < S; i += kCombineThreads)
    weight[i] = ml[2 * i + 1] > 0.0f ? expf(ml[2 * i] - mx) : 0.0f;
  __syncthreads();
  float sum = 0.0f;
  for (int i = 0; i < S; ++i) sum = fmaf(weight[i], ml[2 * i + 1], sum);
  const float* po = a.part_o + row * S * D;
  for (int x = static_cast<int>(threadIdx.x); x < D; x += kCombineThreads) {
    float o = 0.0f;
    for (int i = 0; i < S; ++i)
      if (weight[i] > 0.0f) o = fmaf(weight[i], po[static_cast<int64_t>(i) * D + x], o);
    store_elem<E>(a.o, row * D + x, sum > 0.0f ? o / sum : 0.0f);
  }
  if (threadIdx.x == 0) a.lse[row] = sum > 0.0f ? mx + logf(sum) : neg_inf();
}

}  // namespace

cudaError_t combine_launch(Elem e, const Args& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(int64_t{a.s.batch} * a.s.q_heads));
  switch (e) {
    case Elem::f16: return launch_kernel(combine_kernel<Elem::f16>, grid, dim3(kCombineThreads), 0, stream, a);
    case Elem::bf16: return launch_kernel(combine_kernel<Elem::bf16>, grid, dim3(kCombineThreads), 0, stream, a);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace attnbench::cuda::kivi
