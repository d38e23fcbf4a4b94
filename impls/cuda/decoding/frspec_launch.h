// The interface between frspec on CUDA (frspec_cuda.cpp, host C++) and its draft-head kernels
// (frspec_cuda.cu). Light on purpose: no attnbench headers beyond the method's parameter struct.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference/decoding/frspec_common.h"

namespace attnbench::cuda::frspec {

enum class Elem { f32, f16, bf16 };

struct Params {
  decoding::FrspecParams s;
  Elem elem;
  const void* head;        // [V, D] elem
  const void* hidden;      // [chains·K, D] elem
  const int32_t* subset;   // [V']
  float* logits;           // [chains·K, V']
  float* probs;            // [chains·K, V']
  float* probs_full;       // [chains·K, V]: q scattered to its tokens' ids (0 elsewhere)
  int32_t* top;            // [chains·K]: the first maximum of each logits row
  int32_t* ids;            // [R, K]
  int race_threads;        // threads of one (row, position) race: a power of two, 32..256
  uint32_t domain;         // the draws' domain (rng.h)
};

inline constexpr int kHeadWarps = 8;      // warps of a head CTA, a subset row each at a time
inline constexpr int kHeadTile = 4;       // hidden states per pass over a row (registers per lane)
inline constexpr int kSoftmaxThreads = 256;

cudaError_t head_launch(const Params& p, int ctas, cudaStream_t stream);
cudaError_t softmax_launch(const Params& p, cudaStream_t stream);
cudaError_t draft_launch(const Params& p, cudaStream_t stream);

}  // namespace attnbench::cuda::frspec
