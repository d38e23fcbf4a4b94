// The interface between eagle2_tree on CUDA (eagle2_tree_cuda.cpp, host C++) and its kernels
// (eagle2_tree_cuda.cu). Light on purpose: no attnbench headers beyond the parameter struct.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference/decoding/eagle2_common.h"

namespace attnbench::cuda::eagle2 {

inline constexpr int kThreads = 256;  // both kernels: a power of two (the scans and the fp64 tree)
inline constexpr int64_t kWaves = 4;  // of resident CTAs at most, in a grid
inline constexpr int32_t kMaxTopK = 32, kMaxDepth = 16;  // the shared arrays' sizes: the schema's bounds

struct Params {
  decoding::Eagle2Params s;
  const float* logits;       // [batch, slots, V]
  const int32_t* root_token;  // [batch]
  uint32_t* top;              // [batch, slots, k, 2]: token, ℓ's bits (scratch)
  int32_t* tokens;            // [batch, n]
  int32_t* parents;           // [batch, n]
};

// Both kernels' CTAs per SM (static shared memory only).
cudaError_t configure(int* rows_per_sm, int* select_per_sm);

// Stage 1 over the batch · slots rows with `row_ctas` CTAs in turn, then stage 2 over the trees with
// `tree_ctas`.
cudaError_t launch(const Params& p, int64_t row_ctas, int64_t tree_ctas, cudaStream_t stream);

}  // namespace attnbench::cuda::eagle2
