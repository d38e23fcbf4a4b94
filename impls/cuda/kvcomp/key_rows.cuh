// What the KV scorers share whose lanes split a key's row word by word against their group's
// queries staged in shared memory (lessismore's logits, quest's bounds): a 16-byte word as
// floats, and the staging of the queries. A row of head_dim elements is whole words when head_dim·sizeof(T) is a multiple of 16; buffers start
// 256-byte aligned, so every row then does. How many lanes share a row: key_lanes.h.
#pragma once

#include "attention/kernel_common.cuh"

namespace attnbench::cuda::kv {

template <typename T>
constexpr int kWordElems = static_cast<int>(sizeof(uint4) / sizeof(T));

template <typename T>
__device__ __forceinline__ void widen_word(const uint4& w, float (&out)[kWordElems<T>]) {
  const T* e = reinterpret_cast<const T*>(&w);
#pragma unroll
  for (int i = 0; i < kWordElems<T>; ++i) out[i] = attn::to_f32(e[i]);
}

// qs[0, n) = q[0, n) as fp32, between two barriers (the previous stage is read before it, this
// one visible after it). Every thread of the block of kThreads calls it.
template <int kThreads, typename T>
__device__ __forceinline__ void stage_queries(float* qs, const T* q, int n) {
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < n; i += kThreads) qs[i] = attn::to_f32(q[i]);
  __syncthreads();
}

}  // namespace attnbench::cuda::kv
