// moh's router on CUDA (moh_router_launch.h; semantics: reference/attention/moh_common.h, the
// formulas of reference/attention/moh_router.h in fp32). One CTA per token:
//   scores     the learned router's logits as they are, or ‖q_h‖₂ of each routed head: a warp per
//              head, lanes along head_dim, the fp32 sum of squares reduced by shuffles
//   kept       a thread per head applies the tie rule to the scores in shared memory
//   gates      the norm router's 1 and 0; the learned router's softmaxes, whose statistics (the max
//              and normaliser over the shared heads, and over the kept routed ones) every warp
//              reduces from the token's few logits itself, so no further barrier is needed
//   heads_idx  each kept head at the count of kept heads below it: ascending
#include "kernel_common.cuh"
#include "moh_router_launch.h"

namespace attnbench::cuda::moh_router {
namespace {

constexpr int kWarps = kThreads / 32;

struct Softmax {
  float max, norm;
};

// The max of logits [h0, h1) and Σ exp(logit − max) over them (the kept ones only, when
// over_kept), reduced over the warp's lanes.
__device__ Softmax softmax_of(const float* logit, const int* kept, int h0, int h1, bool over_kept, int lane) {
  float m = neg_inf();
  for (int h = h0 + lane; h < h1; h += 32) m = fmaxf(m, logit[h]);
  m = attn::row_max<32>(m);
  float norm = 0.0f;
  for (int h = h0 + lane; h < h1; h += 32)
    if (!over_kept || kept[h]) norm += expf(logit[h] - m);
  return {m, attn::row_sum<32>(norm)};
}

template <typename T>
__global__ void __launch_bounds__(kThreads) route_kernel(const Args a) {
  const moh::RouterParams& s = a.s;
  ATTNBENCH_DYNAMIC_SMEM(float, smem);
  float* score = smem;                                 // [heads], the routed heads' entries
  int* kept = reinterpret_cast<int*>(smem + s.heads);  // [heads]
  const int H = s.heads, hs = s.shared_heads, d = s.head_dim;
  const int64_t t = blockIdx.x, L = s.q_len, b = t / L, i = t % L;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const float* logit = s.learned ? a.logits + t * s.logit_row : nullptr;

  if (logit) {
    for (int h = hs + tid; h < H; h += kThreads) score[h] = logit[h];
  } else {
    for (int h = hs + warp; h < H; h += kWarps) {
      const T* row = static_cast<const T*>(a.q) + ((b * H + h) * L + i) * d;
      float sq = 0.0f;
      for (int x = lane; x < d; x += 32) {
        const float v = attn::to_f32(row[x]);
        sq = fmaf(v, v, sq);
      }
      sq = attn::row_sum<32>(sq);
      if (lane == 0) score[h] = sqrtf(sq);
    }
  }
  __syncthreads();
  for (int h = tid; h < H; h += kThreads) {
    int ahead = 0;  // routed heads that score higher, or the same at a lower index
    if (h >= hs)
      for (int o = hs; o < H; ++o) ahead += score[o] > score[h] || (score[o] == score[h] && o < h);
    kept[h] = h < hs || ahead < s.routed_k;
  }
  __syncthreads();

  // The learned gates: γ = α_s·shared_heads·softmax over the shared heads, and
  // α_r·routed_k·softmax over the routed heads renormalised over the kept ones.
  float alpha_s = 1.0f, alpha_r = 1.0f;
  Softmax shared{}, routed{};
  if (logit) {
    if (hs > 0 && s.routed_k > 0) {
      const float m = fmaxf(logit[H], logit[H + 1]);
      const float e0 = expf(logit[H] - m), e1 = expf(logit[H + 1] - m);
      alpha_s = 2.0f * e0 / (e0 + e1);
      alpha_r = 2.0f * e1 / (e0 + e1);
    }
    shared = softmax_of(logit, kept, 0, hs, false, lane);
    routed = softmax_of(logit, kept, hs, H, true, lane);
  }
  const int64_t n_act = moh::active_heads(s);
  for (int h = tid; h < H; h += kThreads) {
    float gate = kept[h] ? 1.0f : 0.0f;
    if (logit && h < hs)
      gate = alpha_s * static_cast<float>(hs) * expf(logit[h] - shared.max) / shared.norm;
    else if (logit && kept[h])
      gate = alpha_r * static_cast<float>(s.routed_k) * expf(logit[h] - routed.max) / routed.norm;
    a.gates[(b * H + h) * L + i] = gate;
    if (kept[h]) {
      int below = 0;
      for (int o = 0; o < h; ++o) below += kept[o];
      a.heads_idx[t * n_act + below] = h;
    }
  }
}

template <typename T>
cudaError_t launch(const Args& a, cudaStream_t stream) {
  const int64_t tokens = int64_t{a.s.batch} * a.s.q_len;
  if (tokens == 0) return cudaSuccess;
  return launch_kernel(route_kernel<T>, dim3(static_cast<unsigned>(tokens)), dim3(kThreads), smem_bytes(a.s), stream, a);
  return cudaGetLastError();
}

}  // namespace

cudaError_t route_launch(attn::Elem e, const Args& a, cudaStream_t stream) {
  switch (e) {
    case attn::Elem::f32: return launch<float>(a, stream);
    case attn::Elem::f16: return launch<__half>(a, stream);
    case attn::Elem::bf16: return launch<__nv_bfloat16>(a, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace attnbench::cuda::moh_router
