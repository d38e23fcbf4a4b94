// The interface between knorm on CUDA (knorm_cuda.cpp) and its score kernel (knorm.cu). Light on
// purpose: no JSON, no attnbench headers beyond the family's parameter struct.
#pragma once

#include <cuda_runtime_api.h>

#include "attention/attention_launch.h"  // Elem
#include "reference/kvcomp/scored_selection_common.h"

namespace attnbench::cuda::knorm {

// score = −√(Σ_x k_x²) of every candidate of every cache row, fp32, into scores [rows, candidates].
// `lanes` consecutive threads share a key (a power of two ≤ 32: a row's 16-byte words, or 8-element
// chunks, dealt out in turn), summed by warp shuffles in a fixed order.
struct Args {
  kvcomp::SelectionParams sel;
  const void* k;  // [rows, kv_len, head_dim]
  float* scores;
  int lanes;
};

inline constexpr int kThreads = 256;

cudaError_t scores_launch(attn::Elem e, const Args& a, cudaStream_t stream);

}  // namespace attnbench::cuda::knorm
