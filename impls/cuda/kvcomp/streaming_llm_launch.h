// The interface between streaming_llm's CUDA impl (streaming_llm_cuda.cpp, host C++) and its
// kernel (streaming_llm.cu). Light on purpose: no JSON, no attnbench headers.
//
// The kernel copies rows as raw words, so one kernel serves every dtype: a row of K or V is
// row_bytes = head_dim·sizeof(dtype) bytes, moved in words of `word_bytes` (16, 8, 4 or 2: the
// widest that divides row_bytes and the buffers' alignment).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace attnbench::cuda::kv {

struct StreamingParams {
  const void* k;       // [rows, kv_len, row_bytes]   rows = batch·kv_heads
  const void* v;
  void* k_kept;        // [rows, budget, row_bytes]
  void* v_kept;
  int32_t* kept_idx;   // [rows, budget]
  int32_t* kept_len;   // [rows]
  int64_t rows, kv_len, budget;
  int64_t kept;        // min(budget, kv_len)
  int64_t sinks;       // kept positions [0, sinks) read tokens [0, sinks); the rest token r + kv_len − kept
  int64_t row_bytes;
};

// Kept positions per CTA; the grid is rows × ⌈budget / kPositionsPerCta⌉ CTAs in x.
inline constexpr int kPositionsPerCta = 32;

// Enqueues the compaction on `stream`; returns the launch's error.
cudaError_t streaming_llm_launch(const StreamingParams& p, int word_bytes, cudaStream_t stream);

}  // namespace attnbench::cuda::kv
