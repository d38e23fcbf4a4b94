// specdecpp's acceptance head and stopping rule on CUDA (semantics: reference/decoding/
// specdecpp.cpp; interface: specdecpp_launch.h).
//
//   head  a CTA of 256 threads per (row b, step i); step 0 writes a_1 = 1. head=linear: the two
//         logits z_c = bias[c] + Σ_j W[c, j]·h[j] as fp32 FMA chains over the threads' strided
//         elements (float4 loads when D % 4 == 0: every row then starts on a multiple of 4), each
//         warp's shuffle tree, then thread 0 over the 8 warps in order; a = 1/(1 + expf(z0 − z1))
//         (accurate expf, IEEE division). head=oracle: Σ_x min(p_i(x), q_i(x)), each fp32 term
//         added in fp64 (the spec's accumulation) in the same order pattern, rounded once to fp32.
//         One order, so the same bits every run.
//   stop  a thread per row: P = Π a_j by fp32 products (__fmul_rn: never contracted into 1 − P),
//         the first i ≥ K_min with 1 − P > γ, else K_max → draft_len, which the verification
//         then reads as its lengths.
#include "../runtime/launch.cuh"
#include "specdecpp_launch.h"

namespace attnbench::cuda::specdecpp {
namespace {

constexpr int kHeadWarps = kHeadThreads / 32;

template <typename T>
__device__ __forceinline__ T head_warp_sum(T v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// Both logits' dot products over D, this thread's share.
__device__ __forceinline__ void linear_terms(const Params& p, int64_t n, float& z0, float& z1) {
  const int D = p.s.hidden;
  const float *h = p.hidden + n * D, *w0 = p.weight, *w1 = p.weight + D;
  int j = static_cast<int>(threadIdx.x);
  if (D % 4 == 0) {
    for (int j4 = j; j4 < D / 4; j4 += kHeadThreads) {
      const float4 hv = __ldg(reinterpret_cast<const float4*>(h) + j4);
      const float4 a = __ldg(reinterpret_cast<const float4*>(w0) + j4), b = __ldg(reinterpret_cast<const float4*>(w1) + j4);
      z0 = fmaf(a.x, hv.x, z0), z0 = fmaf(a.y, hv.y, z0), z0 = fmaf(a.z, hv.z, z0), z0 = fmaf(a.w, hv.w, z0);
      z1 = fmaf(b.x, hv.x, z1), z1 = fmaf(b.y, hv.y, z1), z1 = fmaf(b.z, hv.z, z1), z1 = fmaf(b.w, hv.w, z1);
    }
    return;
  }
  for (; j < D; j += kHeadThreads) {
    const float hv = __ldg(h + j);
    z0 = fmaf(__ldg(w0 + j), hv, z0);
    z1 = fmaf(__ldg(w1 + j), hv, z1);
  }
}

// Σ min(p, q) over this thread's share of the vocabulary, in fp64.
__device__ __forceinline__ double oracle_terms(const Params& p, int64_t b, int i) {
  const int K = p.s.max_drafts, V = p.s.vocab;
  const float* pt = p.target + (b * (K + 1) + i) * V;
  const float* qt = p.draft + (b * K + i) * V;
  double acc = 0;
  if (V % 4 == 0) {
    for (int x4 = static_cast<int>(threadIdx.x); x4 < V / 4; x4 += kHeadThreads) {
      const float4 a = __ldg(reinterpret_cast<const float4*>(pt) + x4), c = __ldg(reinterpret_cast<const float4*>(qt) + x4);
      acc += static_cast<double>(fminf(a.x, c.x));
      acc += static_cast<double>(fminf(a.y, c.y));
      acc += static_cast<double>(fminf(a.z, c.z));
      acc += static_cast<double>(fminf(a.w, c.w));
    }
    return acc;
  }
  for (int x = static_cast<int>(threadIdx.x); x < V; x += kHeadThreads) acc += static_cast<double>(fminf(__ldg(pt + x), __ldg(qt + x)));
  return acc;
}

__global__ void __launch_bounds__(kHeadThreads) head_kernel(const Params p) {
  const int K = p.s.max_drafts;
  const int64_t n = blockIdx.x;  // b·K + i
  const int64_t b = n / K;
  const int i = static_cast<int>(n % K);
  if (i == 0) {  // the first step is skipped: a_1 = 1 (the whole CTA leaves together)
    if (threadIdx.x == 0) p.prob[n] = 1.0f;
    return;
  }
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
  // The warps' sums: fp64 holds an fp32 sum exactly, so one array serves both heads.
  __shared__ double part[2][kHeadWarps];
  if (p.s.oracle) {
    const double acc = head_warp_sum(oracle_terms(p, b, i));
    if (lane == 0) part[0][warp] = acc;
    __syncthreads();
    if (threadIdx.x != 0) return;
    double a = 0;
    for (int w = 0; w < kHeadWarps; ++w) a += part[0][w];
    p.prob[n] = static_cast<float>(a);
    return;
  }
  float z0 = 0.0f, z1 = 0.0f;
  linear_terms(p, n, z0, z1);
  z0 = head_warp_sum(z0);
  z1 = head_warp_sum(z1);
  if (lane == 0) {
    part[0][warp] = z0;
    part[1][warp] = z1;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  float l0 = __ldg(p.bias), l1 = __ldg(p.bias + 1);
  for (int w = 0; w < kHeadWarps; ++w) {
    l0 += static_cast<float>(part[0][w]);
    l1 += static_cast<float>(part[1][w]);
  }
  p.prob[n] = 1.0f / (1.0f + expf(l0 - l1));
}

__global__ void __launch_bounds__(kStopThreads) stop_kernel(const Params p) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kStopThreads + threadIdx.x;
  if (b >= p.s.batch) return;
  const int K = p.s.max_drafts;
  const float* a = p.prob + b * K;  // written by head_kernel, earlier on the stream
  float P = 1.0f;
  int32_t stop = K;
  for (int i = 1; i < K; ++i) {
    P = __fmul_rn(P, a[i - 1]);
    if (i >= p.s.min_drafts && 1.0f - P > p.s.threshold) {
      stop = i;
      break;
    }
  }
  p.len[b] = stop;
}

}  // namespace

cudaError_t head_stop_launch(const Params& p, cudaStream_t stream) {
  const int64_t tasks = int64_t{p.s.batch} * p.s.max_drafts;
  cudaError_t e = launch_kernel(head_kernel, dim3(static_cast<unsigned>(tasks)), dim3(kHeadThreads), 0, stream, p);
  if (e == cudaSuccess)
    e = launch_kernel(stop_kernel, dim3(static_cast<unsigned>((p.s.batch + kStopThreads - 1) / kStopThreads)),
                      dim3(kStopThreads), 0, stream, p);
  return e;
}

}  // namespace attnbench::cuda::specdecpp
