// knorm's score kernel on CUDA (knorm_launch.h; semantics: reference/kvcomp/knorm.cpp). Bound by
// reading K once: a key's lanes read neighbouring 16-byte words (8 halves or 4 floats), so a warp
// reads contiguous memory; sums are fp32 and reduced in a fixed order.
#include "attention/kernel_common.cuh"
#include "knorm_launch.h"

namespace attnbench::cuda::knorm {
namespace {

template <typename T>
__device__ __forceinline__ float square_sum(const uint4& w) {
  const T* e = reinterpret_cast<const T*>(&w);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(uint4) / sizeof(T)); ++i) {
    const float x = attn::to_f32(e[i]);
    s = fmaf(x, x, s);
  }
  return s;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) scores_kernel(const Args a) {
  const kvcomp::SelectionParams& s = a.sel;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int lane = static_cast<int>(threadIdx.x) & (a.lanes - 1);
  const int64_t key = t / a.lanes, keys = kvcomp::cache_rows(s) * s.candidates;
  float sum = 0.0f;
  if (key < keys) {
    const int64_t row = key / s.candidates, j = s.sinks + key % s.candidates;
    const T* k = static_cast<const T*>(a.k) + (row * s.kv_len + j) * s.head_dim;
    constexpr int kPerWord = static_cast<int>(sizeof(uint4) / sizeof(T));
    if (s.head_dim % kPerWord == 0) {  // rows start on 16 bytes (buffers are 256-byte aligned)
      const uint4* w = reinterpret_cast<const uint4*>(k);
      for (int i = lane; i < s.head_dim / kPerWord; i += a.lanes) sum += square_sum<T>(__ldg(w + i));
    } else {
      for (int x = lane; x < s.head_dim; x += a.lanes) {
        const float v = attn::to_f32(k[x]);
        sum = fmaf(v, v, sum);
      }
    }
  }
  // Whole warps run (no early return), so the shuffles' groups are complete.
  for (int off = a.lanes >> 1; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (key < keys && lane == 0) a.scores[key] = -sqrtf(sum);
}

}  // namespace

cudaError_t scores_launch(attn::Elem e, const Args& a, cudaStream_t stream) {
  const int64_t threads = kvcomp::cache_rows(a.sel) * a.sel.candidates * a.lanes;
  const unsigned grid = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
  switch (e) {
    case attn::Elem::f32: return launch_kernel(scores_kernel<float>, dim3(grid), dim3(kThreads), 0, stream, a);
    case attn::Elem::f16: return launch_kernel(scores_kernel<__half>, dim3(grid), dim3(kThreads), 0, stream, a);
    case attn::Elem::bf16: return launch_kernel(scores_kernel<__nv_bfloat16>, dim3(grid), dim3(kThreads), 0, stream, a);
  }
  return cudaErrorInvalidValue;
}

}  // namespace attnbench::cuda::knorm
