// The interface between sampling on CUDA (sampling_cuda.cpp, host C++) and its kernel
// (sampling_cuda.cu). Light on purpose: no JSON, no attnbench headers beyond the parameter struct.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference/decoding/sampler_common.h"

namespace attnbench::cuda::sampling {

inline constexpr int kThreads = 256;       // a CTA per row (sampler_stage.cuh's sampler::kThreads)
inline constexpr int64_t kWaves = 4;       // of resident CTAs at most, in a grid

struct Params {
  decoding::SamplerParams s;
  const float* logits;  // [prob_rows, V]
  uint32_t* kept;       // [rows, mask_words]
  int32_t* token;       // [rows], or [rows, gumbel_k]
  uint32_t domain;      // the draws' domain (rng.h)
};

// One CTA of sampler::kThreads per row; `ctas` CTAs take the rows in turn (rows reach 10^7 in
// distribution mode).
cudaError_t launch(const Params& p, int64_t ctas, cudaStream_t stream);

}  // namespace attnbench::cuda::sampling
