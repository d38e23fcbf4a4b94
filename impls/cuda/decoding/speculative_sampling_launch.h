// The interface between the chain verification on CUDA (chain_verify_stage.cpp, host C++: the
// stage of speculative_sampling and specdecpp) and its kernels (speculative_sampling_cuda.cu).
// Light on purpose: no JSON, no attnbench headers beyond the method's parameter struct.
//
// Work is divided into tasks (row, span of the vocabulary), each done by a group of `lanes` threads
// (4, 8, 16 or 32; a power of two, so a group is an aligned part of one warp). A task verifies its
// row's drafts (its length's acceptance draws, shared out among its lanes) and races over its span.
// With one span per row the race kernel writes everything; with several, each task writes its best
// (RaceBest) and the finish kernel (a warp per row) merges them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "race_common.h"
#include "reference/decoding/speculative_sampling_common.h"

namespace attnbench::cuda::speculative {

// A span's race: over the race's weights w, and (after a rejection) over p as well, the fallback
// when the whole residual is zero.
struct RaceBest {
  race::Candidate w, p;
};

struct Params {
  decoding::SpeculativeParams s;
  const float* target;     // [P, K+1, V]
  const float* draft;      // [P, K, V]
  const int32_t* ids;      // [R, K]
  const int32_t* lengths;  // [R]: drafts row r verifies (≤ K), read on the device; null: K for every row
  int32_t* tokens;         // [R, K+1]
  int32_t* emitted;        // [R]
  int32_t* accepted;       // [R]
  int32_t* emitted_draft;  // [R]
  RaceBest* partial;       // [R][spans], when spans > 1
  int spans, span_tokens, lanes;
  uint32_t domain;         // the draws' domain (rng.h)
};

inline constexpr int kRaceThreads = 256;
inline constexpr int kFinishWarps = 8;

// The verification: the race kernel, then the finish kernel when spans > 1.
cudaError_t verify_launch(const Params& p, cudaStream_t stream);

}  // namespace attnbench::cuda::speculative
