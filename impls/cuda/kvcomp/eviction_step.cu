// The per-step eviction's kernels on CUDA (eviction_step_launch.h; semantics:
// reference/kvcomp/eviction_step_common.h).
#include "attention/kernel_common.cuh"
#include "eviction_step_launch.h"

namespace attnbench::cuda::step {
namespace {

template <typename T>
__device__ __forceinline__ float word_dot(const uint4& a, const uint4& b) {
  const T* x = reinterpret_cast<const T*>(&a);
  const T* y = reinterpret_cast<const T*>(&b);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(uint4) / sizeof(T)); ++i) s = fmaf(attn::to_f32(x[i]), attn::to_f32(y[i]), s);
  return s;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) scores_kernel(const Args a) {
  const kvcomp::StepParams& s = a.s;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int lane = static_cast<int>(threadIdx.x) & (a.lanes - 1);
  const int64_t n = s.slots, rows = kvcomp::step_score_rows(s), item = t / a.lanes;
  const bool live = item < rows * n;
  const int64_t row = live ? item / n : 0, i = live ? item % n : 0;
  const int64_t src = kvcomp::step_source_row(s, row), b = src / s.kv_heads;
  const int kv_count = s.shared_scores ? s.kv_heads : 1;
  constexpr int kPerWord = static_cast<int>(sizeof(uint4) / sizeof(T));
  const bool words = s.head_dim % kPerWord == 0;  // rows start on 16 bytes (buffers are 256-byte aligned)
  const int n_words = s.head_dim / kPerWord;
  float a_sum = 0.0f;
  for (int gi = 0; gi < kv_count; ++gi) {
    const int64_t cr = src + gi, g = cr % s.kv_heads;
    const T* key = static_cast<const T*>(a.k) + (cr * n + i) * s.head_dim;
    uint4 kw[kMaxWordsPerLane];
    if (words && live)
#pragma unroll
      for (int w = 0; w < kMaxWordsPerLane; ++w)
        if (lane + w * a.lanes < n_words) kw[w] = __ldg(reinterpret_cast<const uint4*>(key) + lane + w * a.lanes);
    for (int hh = 0; hh < s.group; ++hh) {
      const int64_t bh = b * s.q_heads + g * s.group + hh;
      const T* q = static_cast<const T*>(a.q) + bh * s.head_dim;
      float dot = 0.0f;
      if (live) {
        if (words) {
#pragma unroll
          for (int w = 0; w < kMaxWordsPerLane; ++w)
            if (lane + w * a.lanes < n_words) dot += word_dot<T>(__ldg(reinterpret_cast<const uint4*>(q) + lane + w * a.lanes), kw[w]);
        } else {
          for (int x = lane; x < s.head_dim; x += a.lanes) dot = fmaf(attn::to_f32(q[x]), attn::to_f32(key[x]), dot);
        }
      }
      // Whole warps run (no early return), so the shuffles' groups are complete.
      for (int off = a.lanes >> 1; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
      a_sum += __expf(dot * s.scale - a.lse[bh]);
    }
  }
  if (!live || lane != 0) return;
  a_sum /= static_cast<float>(kvcomp::step_heads_per_row(s));
  const float score = (s.accumulate && i < n - 1 ? a.acc[src * (n - 1) + i] : 0.0f) + a_sum;
  const int32_t p = a.pos[src * n + i];
  const float k = s.visible_mean ? score / static_cast<float>(s.kv_len - p) : score;
  a.keys[row * n + i] = kvcomp::step_candidate(s, p) ? k : __int_as_float(0x7f800000);
  for (int gi = 0; gi < kv_count; ++gi) a.scores[(src + gi) * n + i] = score;
}

__global__ void __launch_bounds__(kThreads) evict_kernel(const Args a) {
  const kvcomp::StepParams& s = a.s;
  const int64_t row = blockIdx.x, n = s.slots, src = kvcomp::step_source_row(s, row);
  __shared__ float best_key[kThreads];
  __shared__ int32_t best_pos[kThreads];
  __shared__ int32_t best_slot[kThreads];
  float bk = __int_as_float(0x7f800000);
  int32_t bp = -1, bs = -1;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float k = a.keys[row * n + i];
    const int32_t p = a.pos[src * n + i];
    if (bs < 0 || kvcomp::step_evicts_first(k, p, bk, bp)) {
      bk = k;
      bp = p;
      bs = static_cast<int32_t>(i);
    }
  }
  best_key[threadIdx.x] = bk;
  best_pos[threadIdx.x] = bp;
  best_slot[threadIdx.x] = bs;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    const int o = threadIdx.x + half;
    if (static_cast<int>(threadIdx.x) < half && best_slot[o] >= 0 &&
        (best_slot[threadIdx.x] < 0 || kvcomp::step_evicts_first(best_key[o], best_pos[o], best_key[threadIdx.x], best_pos[threadIdx.x]))) {
      best_key[threadIdx.x] = best_key[o];
      best_pos[threadIdx.x] = best_pos[o];
      best_slot[threadIdx.x] = best_slot[o];
    }
    __syncthreads();
  }
  const int kv_count = s.shared_scores ? s.kv_heads : 1;
  for (int t = threadIdx.x; t < kv_count; t += kThreads) a.evicted[src + t] = best_slot[0];
}

}  // namespace

cudaError_t scores_launch(attn::Elem e, const Args& a, cudaStream_t stream) {
  const int64_t threads = kvcomp::step_score_rows(a.s) * a.s.slots * a.lanes;
  const unsigned grid = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
  switch (e) {
    case attn::Elem::f32: return launch_kernel(scores_kernel<float>, dim3(grid), dim3(kThreads), 0, stream, a);
    case attn::Elem::f16: return launch_kernel(scores_kernel<__half>, dim3(grid), dim3(kThreads), 0, stream, a);
    case attn::Elem::bf16: return launch_kernel(scores_kernel<__nv_bfloat16>, dim3(grid), dim3(kThreads), 0, stream, a);
  }
  return cudaErrorInvalidValue;
}

cudaError_t evict_launch(const Args& a, cudaStream_t stream) {
  return launch_kernel(evict_kernel, dim3(static_cast<unsigned>(kvcomp::step_score_rows(a.s))), dim3(kThreads), 0, stream, a);
}

}  // namespace attnbench::cuda::step
