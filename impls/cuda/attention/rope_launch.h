// The interface between rope on CUDA (rope_cuda.cpp) and its kernel (rope.cu). Light on purpose.
#pragma once

#include <cuda_runtime_api.h>

#include "attention_launch.h"  // Elem
#include "reference/attention/rope_common.h"

namespace attnbench::cuda::rope_kernel {

struct Args {
  rope::RopeParams s;
  const void* q;  // [batch, q_heads, tokens, head_dim]
  const void* k;  // [batch, kv_heads, tokens, head_dim]
  const int32_t* positions;  // [batch, tokens]
  const float* inv_freq;     // [rotary_dim / 2]
  void* q_rot;
  void* k_rot;
};

inline constexpr int kThreads = 128;

// One CTA per token: its coefficients in shared memory once (sincosf, CUDA's full-range
// reduction), then every element of its heads, consecutive threads on consecutive elements.
cudaError_t rotate_launch(attn::Elem e, const Args& a, cudaStream_t stream);

}  // namespace attnbench::cuda::rope_kernel
