// The interface between the per-step eviction on CUDA (eviction_step_cuda.h) and its kernels
// (eviction_step.cu). Light on purpose: no JSON, no attnbench headers beyond the step's parameters.
//   scores: `lanes` consecutive threads share a (score row, slot) item (a power of two ≤ 32: the
//           key's 16-byte words, or its elements, dealt out in turn); per KV head of the row the
//           lanes keep their words of the slot's key in registers and dot them with each query
//           head of that KV head, reduced by warp shuffles in a fixed order; exp(logit − lse_h)
//           summed over the row's heads; score and eviction key written by lane 0.
//   evict:  one CTA per score row: strided scan for the first to evict, then a shared-memory tree
//           (positions are distinct in a row, so the order cannot change the answer).
#pragma once

#include <cuda_runtime_api.h>

#include "attention/attention_launch.h"  // Elem
#include "reference/kvcomp/eviction_step_common.h"

namespace attnbench::cuda::step {

struct Args {
  kvcomp::StepParams s;
  const void* q;       // [batch·q_heads, head_dim]
  const void* k;       // [batch·kv_heads, slots, head_dim]
  const float* lse;    // [batch·q_heads]
  const int32_t* pos;  // [batch·kv_heads, slots]
  const float* acc;    // [batch·kv_heads, slots − 1] or null
  float* scores;       // [batch·kv_heads, slots]
  float* keys;         // [score rows, slots]
  int32_t* evicted;    // [batch·kv_heads]
  int lanes;
};

inline constexpr int kThreads = 256;
inline constexpr int kMaxWordsPerLane = 4;  // head_dim 512 in f32 over 32 lanes

cudaError_t scores_launch(attn::Elem e, const Args& a, cudaStream_t stream);
cudaError_t evict_launch(const Args& a, cudaStream_t stream);

}  // namespace attnbench::cuda::step
