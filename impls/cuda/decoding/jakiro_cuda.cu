// jakiro's row passes on CUDA (semantics: reference/decoding/jakiro.cpp; interface: jakiro_launch.h),
// between the projections: a CTA of kRowThreads per forward row, each thread over the row's
// elements tid, tid + kRowThreads, …; fp32 arithmetic, one rounding to the storage type per output.
//   norm      Σx² per thread in order, each warp's shuffle tree, then the warps' sums in order
//             (one order: the same bits every run); inv = 1/sqrtf(Σ/d + ε) (IEEE, no fast math)
//   activate  act = gate/(1 + expf(−gate))·up, both experts' d columns
//   mix       the routing (jakiro_common.h jakiro_route, with expf), x + (w₀E₀ + w₁E₁) at the
//             row's slot and, for the last k rows, x + (w_hi·E_hi − w_lo·E_lo) at its contrastive slot
// The storage type is a runtime switch (uniform per launch): one instance per pass, and these
// passes are a small share of the projections' traffic.
#include "../attention/kernel_common.cuh"
#include "jakiro_launch.h"

namespace attnbench::cuda::jakiro {
namespace {

__global__ void __launch_bounds__(kRowThreads) norm_kernel(const Params p) {
  constexpr int kWarps = kRowThreads / 32;
  __shared__ float partial[kWarps];
  const int64_t d = p.s.hidden, base = int64_t{blockIdx.x} * d;
  const int tid = static_cast<int>(threadIdx.x);
  float ms = 0.0f;
  for (int64_t j = tid; j < d; j += kRowThreads) {
    const float x = attn::load_elem(p.x, p.elem, base + j);
    ms = fmaf(x, x, ms);
  }
  ms = warp_sum(ms);
  if ((tid & 31) == 0) partial[tid >> 5] = ms;
  __syncthreads();
  ms = partial[0];
  for (int w = 1; w < kWarps; ++w) ms += partial[w];
  const float inv = 1.0f / sqrtf(ms / static_cast<float>(d) + p.s.eps);
  for (int64_t j = tid; j < d; j += kRowThreads)
    attn::store_elem(p.normed, p.elem, base + j, attn::load_elem(p.x, p.elem, base + j) * inv * attn::load_elem(p.g, p.elem, j));
}

__global__ void __launch_bounds__(kRowThreads) activate_kernel(const Params p) {
  const int64_t d = p.s.hidden, r = blockIdx.x;
  for (int64_t i = threadIdx.x; i < 2 * d; i += kRowThreads) {
    const int64_t e = i / d, j = i - e * d, in = r * 4 * d + 2 * e * d + j;
    const float gate = attn::load_elem(p.gate_up, p.elem, in), up = attn::load_elem(p.gate_up, p.elem, in + d);
    attn::store_elem(p.act, p.elem, r * 2 * d + i, gate / (1.0f + expf(-gate)) * up);
  }
}

__global__ void __launch_bounds__(kRowThreads) mix_kernel(const Params p) {
  const int64_t d = p.s.hidden, F = p.s.forward_rows, S = p.s.slots, r = blockIdx.x;
  const int64_t b = r / F, q = r - b * F, s_con = decoding::jakiro_contrastive_slot(p.s, q);
  const float* z = p.router + r * 4;
  const auto w = decoding::jakiro_route(z, [](float x) { return expf(x); });  // accurate expf: the spec's
  const bool hi0 = w.hi == 0;
  const int64_t in = r * d, e_row = r * 2 * d, moe = (b * S + q) * d, con = (b * S + s_con) * d;
  for (int64_t j = threadIdx.x; j < d; j += kRowThreads) {
    const float x = attn::load_elem(p.x, p.elem, in + j);
    const float e0 = attn::load_elem(p.expert_out, p.elem, e_row + j), e1 = attn::load_elem(p.expert_out, p.elem, e_row + d + j);
    attn::store_elem(p.features, p.elem, moe + j, x + (w.w0 * e0 + w.w1 * e1));
    if (s_con >= 0) attn::store_elem(p.features, p.elem, con + j, x + (w.w_hi * (hi0 ? e0 : e1) - w.w_lo * (hi0 ? e1 : e0)));
  }
}

cudaError_t launch_rows(void (*kernel)(Params), const Params& p, cudaStream_t stream) {
  const int64_t rows = int64_t{p.s.batch} * p.s.forward_rows;
  if (rows == 0) return cudaSuccess;
  return launch_kernel(kernel, dim3(static_cast<unsigned>(rows)), dim3(kRowThreads), 0, stream, p);
}

}  // namespace

cudaError_t norm_launch(const Params& p, cudaStream_t stream) { return launch_rows(norm_kernel, p, stream); }
cudaError_t activate_launch(const Params& p, cudaStream_t stream) { return launch_rows(activate_kernel, p, stream); }
cudaError_t mix_launch(const Params& p, cudaStream_t stream) { return launch_rows(mix_kernel, p, stream); }

}  // namespace attnbench::cuda::jakiro
