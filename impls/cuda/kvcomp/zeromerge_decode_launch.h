// The interface between zeromerge_decode on CUDA (zeromerge_decode_cuda.cpp, host C++) and its
// kernel (zeromerge_decode.cu: every decode step of a row in one CTA). Light on purpose: no JSON,
// no attnbench headers beyond the method's parameter struct.
//
// A CTA owns one row (sequence b, KV head g; blockIdx.x = b·kv_heads + g) and runs all of the
// case's steps in order; rows never exchange data, so one launch serves every step. Rows are read
// in 16-byte chunks of kChunkElems elements (4 f32, 8 f16 or bf16):
//   keys    `key_lanes` consecutive lanes share a key (the smallest power of two ≥ the row's
//           chunks, at most 32), dealing out its chunks in turn; the warp's keys, then the CTA's,
//           side by side (the logits and the merge's nearest dense slot);
//   values  thread t takes chunk t % chunks of the value rows of key group t / chunks;
//           value_groups = kThreads / chunks groups split the keys, their partial sums reduced in
//           shared memory in a fixed order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "attention/attention_launch.h"  // Elem
#include "reference/kvcomp/zeromerge_common.h"

namespace attnbench::cuda::zeromerge {

using attn::Elem;

inline constexpr int kWarps = 8;
inline constexpr int kThreads = 32 * kWarps;
inline constexpr int kMaxGroup = kWarps;    // the softmax gives each query head of the group a warp
inline constexpr int kMaxHeadDim = 512;     // at most 128 chunks: every value group holds a whole row

// Elements of a 16-byte chunk of a row.
inline constexpr int chunk_elems(Elem e) { return e == Elem::f32 ? 4 : 8; }

// Lanes sharing a key: the smallest power of two holding the row's chunks, at most a warp.
inline int key_lanes(int chunks) {
  int lanes = 1;
  while (lanes < chunks && lanes < 32) lanes *= 2;
  return lanes;
}

// The CTA's dynamic shared memory: the group's scaled queries [group][head_dim], the merged-away
// key [head_dim] and the value groups' partial outputs [value_groups][group][head_dim], fp32.
inline size_t smem_bytes(const kvcomp::ZeromergeParams& s, Elem e) {
  const int chunks = s.head_dim / chunk_elems(e);
  const size_t value_groups = static_cast<size_t>(kThreads / chunks);
  return (static_cast<size_t>(s.group) * s.head_dim * (1 + value_groups) + s.head_dim) * sizeof(float);
}

struct Args {
  kvcomp::ZeromergeParams s;
  const void* q_new;     // [batch, q_heads, steps, head_dim]         Elem
  const void* k_new;     // [batch, kv_heads, steps, head_dim]        Elem
  const void* v_new;
  void* k;               // [batch, kv_heads, budget, head_dim]       Elem: the cache, updated in place
  void* v;
  float* w;              // [batch, kv_heads, budget]
  float* score;          // [batch, kv_heads, budget]
  void* out;             // [batch, q_heads, steps, head_dim]         Elem
  int32_t* merged_from;  // [batch, kv_heads, steps]
  int32_t* merged_into;
  float* logits;         // workspace [batch·kv_heads, group, budget + 1]: a step's logits, then exp(logit − max)
  int key_lanes;         // key_lanes(chunks)
  int value_groups;      // kThreads / chunks
};

// Sets the kernel's shared-memory limit to `smem` and reports how many of its CTAs fit on an SM
// (once, in prepare); `launch` enqueues one CTA per row. Both return the CUDA error instead of
// throwing.
cudaError_t steps_configure(Elem e, size_t smem, int* ctas_per_sm);
cudaError_t steps_launch(Elem e, const Args& a, size_t smem, cudaStream_t stream);

}  // namespace attnbench::cuda::zeromerge
