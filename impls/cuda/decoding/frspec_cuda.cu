// frspec's draft head on CUDA (semantics: reference/decoding/frspec.cpp; interface:
// frspec_launch.h). Three kernels, then the verification is speculative_sampling's stage:
//   head     a warp per subset row j at a time (grid-stride): each lane holds 8 elements of the
//            row per step (one 16-byte load of a 16-bit head, two of fp32) and multiplies them
//            with kHeadTile hidden states at once; the warp's shuffle sum gives those logits. A
//            row (D elements) is read from memory once: the passes for further hidden states find
//            it in L1. Memory-bound for the few hidden states of decoding (the V'·D head bytes).
//   softmax  a CTA per hidden state: the max, the first index holding it, the sum of
//            e = exp((z − max)/T) (expf, accurate), then q = e/sum written in subset order and
//            scattered to the tokens' ids; greedy rows write the one-hot at the first maximum.
//   draft    a CTA per (row, position): the race over q (race.cuh; U("frspec.draft", (r·K + t)·V'
//            + j)), merged across warps in shared memory; greedy takes the first maximum; the id
//            is subset[j].
#include <cuda_fp16.h>

#include "../runtime/launch.cuh"
#include "frspec_launch.h"
#include "race.cuh"

namespace attnbench::cuda::frspec {
namespace {

// 8 consecutive elements as fp32, from a 16-byte boundary (two for fp32): one or two vector loads.
template <Elem E>
__device__ __forceinline__ void load8(const void* base, int64_t i, float out[8]) {
  if constexpr (E == Elem::f32) {
    const float4* p = reinterpret_cast<const float4*>(static_cast<const float*>(base) + i);
    const float4 a = __ldg(p), b = __ldg(p + 1);
    out[0] = a.x, out[1] = a.y, out[2] = a.z, out[3] = a.w, out[4] = b.x, out[5] = b.y, out[6] = b.z, out[7] = b.w;
  } else {
    const uint4 w = __ldg(reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(base) + i));
    const uint32_t words[4] = {w.x, w.y, w.z, w.w};
    for (int e = 0; e < 8; ++e) {
      const auto h = static_cast<uint16_t>(e % 2 ? words[e / 2] >> 16 : words[e / 2] & 0xffffu);
      if constexpr (E == Elem::bf16) out[e] = __uint_as_float(static_cast<uint32_t>(h) << 16);
      else out[e] = __half2float(__ushort_as_half(h));
    }
  }
}

template <Elem E>
__device__ __forceinline__ float load1(const void* base, int64_t i) {
  if constexpr (E == Elem::f32) return __ldg(static_cast<const float*>(base) + i);
  const uint16_t h = __ldg(static_cast<const uint16_t*>(base) + i);
  if constexpr (E == Elem::bf16) return __uint_as_float(static_cast<uint32_t>(h) << 16);
  else return __half2float(__ushort_as_half(h));
}

template <Elem E>
__global__ void __launch_bounds__(kHeadWarps * 32) head_kernel(const Params p) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int64_t D = p.s.hidden, Vs = p.s.subset, H = int64_t{p.s.prob_rows} * p.s.draft_len;
  // Whole 8-element chunks when every row starts on one (D % 8 == 0); else element by element.
  const bool chunked = D % 8 == 0;
  const int64_t warps = int64_t{gridDim.x} * kHeadWarps;
  for (int64_t j = int64_t{blockIdx.x} * kHeadWarps + (threadIdx.x >> 5); j < Vs; j += warps) {
    const int64_t row = int64_t{__ldg(p.subset + j)} * D;
    for (int64_t h0 = 0; h0 < H; h0 += kHeadTile) {
      const int tile = static_cast<int>(H - h0 < kHeadTile ? H - h0 : kHeadTile);
      float acc[kHeadTile] = {};
      if (chunked) {
        for (int64_t d = 8 * int64_t{lane}; d < D; d += 8 * 32) {
          float w[8];
          load8<E>(p.head, row + d, w);
#pragma unroll
          for (int i = 0; i < kHeadTile; ++i) {
            if (i >= tile) break;
            float x[8];
            load8<E>(p.hidden, (h0 + i) * D + d, x);
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[i] = fmaf(w[e], x[e], acc[i]);
          }
        }
      } else {
        for (int64_t d = lane; d < D; d += 32) {
          const float w = load1<E>(p.head, row + d);
#pragma unroll
          for (int i = 0; i < kHeadTile; ++i)
            if (i < tile) acc[i] = fmaf(w, load1<E>(p.hidden, (h0 + i) * D + d), acc[i]);
        }
      }
#pragma unroll
      for (int i = 0; i < kHeadTile; ++i)
        for (int off = 16; off > 0; off >>= 1) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], off);
      if (lane == 0)
        for (int i = 0; i < tile; ++i) p.logits[(h0 + i) * Vs + j] = acc[i];
    }
  }
}

// The better of two (value, index) pairs: the larger value, then the smaller index.
__device__ __forceinline__ void best_of(float& v, int& i, float v2, int i2) {
  if (v2 > v || (v2 == v && i2 < i)) v = v2, i = i2;
}

__global__ void __launch_bounds__(kSoftmaxThreads) softmax_kernel(const Params p) {
  __shared__ float red_v[kSoftmaxThreads / 32];
  __shared__ int red_i[kSoftmaxThreads / 32];
  const int64_t h = blockIdx.x, Vs = p.s.subset, V = p.s.vocab;
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
  const float* z = p.logits + h * Vs;
  float m = neg_inf();
  int top = 0x7fffffff;
  for (int64_t j = threadIdx.x; j < Vs; j += kSoftmaxThreads) best_of(m, top, z[j], static_cast<int>(j));
  for (int off = 16; off > 0; off >>= 1) best_of(m, top, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, top, off));
  if (lane == 0) red_v[warp] = m, red_i[warp] = top;
  __syncthreads();
  m = red_v[0], top = red_i[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) best_of(m, top, red_v[w], red_i[w]);
  __syncthreads();
  if (threadIdx.x == 0) p.top[h] = top;
  float* q = p.probs + h * Vs;
  float* q_full = p.probs_full + h * V;
  if (p.s.greedy) {
    for (int64_t j = threadIdx.x; j < Vs; j += kSoftmaxThreads) {
      const float v = j == top ? 1.0f : 0.0f;
      q[j] = v;
      q_full[__ldg(p.subset + j)] = v;
    }
    return;
  }
  const float inv_t = p.s.inv_temperature;
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < Vs; j += kSoftmaxThreads) sum += expf((z[j] - m) * inv_t);
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) red_v[warp] = sum;
  __syncthreads();
  sum = 0.0f;
  for (int w = 0; w < kSoftmaxThreads / 32; ++w) sum += red_v[w];
  for (int64_t j = threadIdx.x; j < Vs; j += kSoftmaxThreads) {
    const float v = expf((z[j] - m) * inv_t) / sum;
    q[j] = v;
    q_full[__ldg(p.subset + j)] = v;
  }
}

__global__ void __launch_bounds__(256) draft_kernel(const Params p) {
  __shared__ race::Candidate red[8];
  const int64_t K = p.s.draft_len, r = blockIdx.x / K, t = blockIdx.x % K;
  const int64_t h = decoding::frspec_chain_of(p.s, r) * K + t;
  if (p.s.greedy) {
    if (threadIdx.x == 0) p.ids[blockIdx.x] = __ldg(p.subset + p.top[h]);
    return;
  }
  const int threads = p.race_threads, warp = static_cast<int>(threadIdx.x >> 5);
  const int lanes = min(threads, 32);
  const float* q = p.probs + h * p.s.subset;
  const DevicePhilox site = DevicePhilox::make(static_cast<uint64_t>(p.s.seed_hi) << 32 | p.s.seed_lo, p.s.draft_stream, p.domain);
  const int Vs = p.s.subset;
  race::Candidate best = race::none();
  race::walk_blocks(site, decoding::frspec_draft_index(p.s, r, t, 0), 0, Vs, static_cast<int>(threadIdx.x), threads,
                    [&](int64_t xb, uint4 words) {
                      const uint32_t word[4] = {words.x, words.y, words.z, words.w};
#pragma unroll
                      for (int e = 0; e < 4; ++e)
                        if (xb + e >= 0 && xb + e < Vs)
                          race::consider(best, logf(q[xb + e]), race::log_neg_log(word[e]), static_cast<int32_t>(xb + e));
                    });
  race::group_merge(best, race::group_mask(lanes), lanes);
  if ((threadIdx.x & 31) == 0) red[warp] = best;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < threads / 32; ++w) race::merge(best, red[w]);
  p.ids[blockIdx.x] = __ldg(p.subset + race::winner(best));
}

}  // namespace

cudaError_t head_launch(const Params& p, int ctas, cudaStream_t stream) {
  switch (p.elem) {
    case Elem::f32: return launch_kernel(head_kernel<Elem::f32>, dim3(ctas), dim3(kHeadWarps * 32), 0, stream, p);
    case Elem::f16: return launch_kernel(head_kernel<Elem::f16>, dim3(ctas), dim3(kHeadWarps * 32), 0, stream, p);
    default: return launch_kernel(head_kernel<Elem::bf16>, dim3(ctas), dim3(kHeadWarps * 32), 0, stream, p);
  }
}

cudaError_t softmax_launch(const Params& p, cudaStream_t stream) {
  return launch_kernel(softmax_kernel, dim3(static_cast<unsigned>(int64_t{p.s.prob_rows} * p.s.draft_len)), dim3(kSoftmaxThreads), 0,
                       stream, p);
}

cudaError_t draft_launch(const Params& p, cudaStream_t stream) {
  return launch_kernel(draft_kernel, dim3(static_cast<unsigned>(int64_t{p.s.rows} * p.s.draft_len)),
                       dim3(p.s.greedy ? 32 : p.race_threads), 0, stream, p);
}

}  // namespace attnbench::cuda::frspec
