// The interface between specdecpp on CUDA (specdecpp_cuda.cpp, host C++) and its head and stop
// kernels (specdecpp_cuda.cu); the verification is the chain verification stage
// (chain_verify_stage.h). Light on purpose: no attnbench headers beyond the method's parameter
// struct.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference/decoding/specdecpp_common.h"

namespace attnbench::cuda::specdecpp {

struct Params {
  decoding::SpecDecParams s;
  const float* target;  // [B, K+1, V] (oracle)
  const float* draft;   // [B, K, V] (oracle)
  const float* hidden;  // [B, K, D] (linear)
  const float* weight;  // [2, D] (linear)
  const float* bias;    // [2] (linear)
  float* prob;          // [B, K]: accept_prob
  int32_t* len;         // [B]: draft_len, the verification's lengths
};

inline constexpr int kHeadThreads = 256;  // a CTA per (row, step)
inline constexpr int kStopThreads = 256;  // a thread per row

// The head over every (row, step), then the stopping rule of every row.
cudaError_t head_stop_launch(const Params& p, cudaStream_t stream);

}  // namespace attnbench::cuda::specdecpp
