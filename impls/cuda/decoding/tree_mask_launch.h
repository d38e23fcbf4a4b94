// The interface between tree_mask on CUDA (tree_mask_cuda.cpp, host C++) and its kernel
// (tree_mask_cuda.cu). Light on purpose: no JSON, no attnbench headers beyond the parameter struct.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "reference/decoding/tree_common.h"

namespace attnbench::cuda::tree_mask {

inline constexpr int kMaxThreads = 256;  // a CTA per tree
inline constexpr int64_t kWaves = 4;     // of resident CTAs at most, in a grid

struct Params {
  decoding::TreeParams s;
  const int32_t* parents;  // [batch, n]
  uint32_t* mask;          // [batch, n, mask_words]
  int32_t* depth;          // [batch, n]
  int32_t* position_ids;   // [batch, n]
  int32_t* n_leaves;       // [batch]
  int32_t* retrieve;       // [batch, n, max_depth + 1]
};

// A tree's threads: a warp per 32 nodes up to kMaxThreads (a small tree leaves no idle warps, so
// more of its CTAs share an SM).
inline int threads_for(int32_t nodes) {
  const int warps = (nodes + 31) / 32;
  return warps >= kMaxThreads / 32 ? kMaxThreads : (warps < 1 ? 32 : warps * 32);
}

// Dynamic shared memory of a tree's CTA: the parents, depths and child counts (n each), then the
// leaf bits and each 32-node word's first leaf index (ceil(n/32) each), all 4-byte.
inline size_t smem_bytes(const decoding::TreeParams& s) {
  const size_t n = static_cast<size_t>(s.nodes), words = (n + 31) / 32;
  return 4 * (3 * n + 2 * words);
}

// Sets the kernel's shared-memory limit to `smem` and reports how many CTAs of `threads` fit an SM.
cudaError_t configure(int threads, size_t smem, int* ctas_per_sm);

// `ctas` CTAs of `threads` (threads_for()) take the trees in turn, each with `smem` (smem_bytes()).
cudaError_t launch(const Params& p, int64_t ctas, int threads, size_t smem, cudaStream_t stream);

}  // namespace attnbench::cuda::tree_mask
