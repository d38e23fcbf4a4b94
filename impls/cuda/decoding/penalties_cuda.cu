// penalties on CUDA (semantics: reference/decoding/penalties.cpp): a CTA per row, the CTAs of the
// grid taking rows in turn. The row's counts are zeroed, the history scattered into them by global
// atomics (only this CTA touches the row, so __syncthreads orders them), and each logit penalised
// by penalties_common.h's penalised(), the reference's fp32 order.
#include "../runtime/launch.cuh"
#include "penalties_launch.h"

namespace attnbench::cuda::penalties {
namespace {

__global__ void __launch_bounds__(kThreads) penalties_kernel(const Params p) {
  const int64_t V = p.s.vocab, L = p.s.history;
  const int t = static_cast<int>(threadIdx.x);
  for (int64_t row = blockIdx.x; row < p.s.batch; row += gridDim.x) {
    int32_t* count = p.counts + row * V;
    for (int64_t x = t; x < V; x += kThreads) count[x] = 0;
    __syncthreads();
    const int32_t* h = p.history + row * L;
    for (int64_t i = t; i < L; i += kThreads) atomicAdd(&count[h[i]], 1);
    __syncthreads();
    const float* z = p.logits + row * V;
    float* o = p.out + row * V;
    for (int64_t x = t; x < V; x += kThreads) o[x] = decoding::penalised(p.s, z[x], count[x]);
    __syncthreads();  // the next row's zeroing after every read of this one (a CTA's rows differ; kept simple)
  }
}

}  // namespace

cudaError_t launch(const Params& p, int64_t ctas, cudaStream_t stream) {
  return launch_kernel(penalties_kernel, dim3(static_cast<unsigned>(ctas)), dim3(kThreads), 0, stream, p);
}

}  // namespace attnbench::cuda::penalties
