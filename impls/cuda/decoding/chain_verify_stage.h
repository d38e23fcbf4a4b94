// The decoding family's chain verification stage on CUDA (semantics: reference/decoding/
// chain_verify.h): speculative_sampling's impl is this stage, and specdecpp's verification after its
// stopping rule (each row verifies lengths[r] drafts, read on the device). Kernels:
// speculative_sampling_cuda.cu (task layout: speculative_sampling_launch.h).
//
// The plan, fixed in prepare() from the case and the SM count (no result depends on it: the
// acceptance tests are per draft and the race's argmax does not depend on how the vocabulary is
// divided):
//   spans        vocabulary parts per row: enough (row, span) tasks to fill every warp slot of the
//                GPU, each span at least 256 tokens (one span when the rows alone fill it, as in
//                distribution mode)
//   span_tokens  a multiple of 4, so a span starts on a Philox block (and a float4) when V % 4 == 0
//   lanes        threads per task: 4..32, about 16 tokens (4 Philox blocks) per lane
// One kernel when spans == 1, else the race kernel and the finish kernel (a warp per row).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "attnbench/impl.h"
#include "reference/decoding/speculative_sampling_common.h"
#include "speculative_sampling_launch.h"

namespace attnbench::cuda {

class ChainVerifyStage {
 public:
  // Binds target_probs, draft_probs, draft_token_ids and the four outputs of `io`; the draws are
  // those of s's seed and streams.
  void prepare(const decoding::SpeculativeParams& s, CudaBackend& backend, const IoBuffers& io);
  // Enqueues the verification on `stream`. lengths: each row's drafts (≤ draft_len) in device
  // memory, or null for draft_len everywhere.
  void run(const int32_t* lengths, cudaStream_t stream);

 private:
  speculative::Params params_{};
  BufferPtr partial_;
};

}  // namespace attnbench::cuda
