// The interface between speculative_sampling on CUDA (speculative_sampling_cuda.cpp, host C++)
// and its kernels (speculative_sampling_cuda.cu). Light on purpose: no JSON, no attnbench headers.
//
// Work is divided into tasks (row, span of the vocabulary), each done by a group of `lanes` threads
// (4, 8, 16 or 32; a power of two, so a group is an aligned part of one warp). A task verifies its
// row's drafts (K acceptance draws, shared out among its lanes) and races over its span. With one
// span per row the race kernel writes everything; with several, each task writes its best
// (RaceBest) and the finish kernel (a warp per row) merges them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace attnbench::cuda::spec {

// The best of a part of a race: the best key and its index (−1: no finite key), and the smallest
// index with a positive weight (kNoToken: none), for the race's weights w and, when w is the
// residual max(0, p − q), for p as well (the fallback when the whole residual is zero).
struct RaceBest {
  float w_key;
  int32_t w_index;
  int32_t w_first;
  float p_key;
  int32_t p_index;
  int32_t p_first;
};
inline constexpr int32_t kNoToken = 0x7fffffff;

struct Params {
  const float* target;  // [P, K+1, V]
  const float* draft;   // [P, K, V]
  const int32_t* ids;   // [R, K]
  int32_t* tokens;      // [R, K+1]
  int32_t* emitted;     // [R]
  int32_t* accepted;    // [R]
  int32_t* emitted_draft;  // [R]
  RaceBest* partial;    // [R][spans], when spans > 1
  int64_t rows;         // R
  int draft_len;        // K
  int vocab;            // V
  bool distribution;    // every row reads probability row 0
  int spans, span_tokens, lanes;
  uint64_t seed;                                // the case seed: the Philox key
  uint32_t accept_stream, race_stream, domain;  // the two draw sites' stream ids; the draws' domain
};

inline constexpr int kRaceThreads = 256;
inline constexpr int kFinishWarps = 8;

cudaError_t race_launch(const Params& p, cudaStream_t stream);
cudaError_t finish_launch(const Params& p, cudaStream_t stream);  // only when spans > 1

}  // namespace attnbench::cuda::spec
