// The interface between penalties on CUDA (penalties_cuda.cpp, host C++) and its kernel
// (penalties_cuda.cu). Light on purpose: no JSON, no attnbench headers beyond the parameter struct.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference/decoding/penalties_common.h"

namespace attnbench::cuda::penalties {

inline constexpr int kThreads = 256;   // a CTA per row
inline constexpr int64_t kWaves = 4;   // of resident CTAs at most, in a grid

struct Params {
  decoding::PenaltiesParams s;
  const float* logits;     // [batch, V]
  const int32_t* history;  // [batch, L]
  float* out;              // [batch, V]
  int32_t* counts;         // [batch, V]
};

// `ctas` CTAs of kThreads take the rows in turn.
cudaError_t launch(const Params& p, int64_t ctas, cudaStream_t stream);

}  // namespace attnbench::cuda::penalties
