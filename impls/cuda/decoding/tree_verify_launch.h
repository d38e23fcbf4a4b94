// The interface between tree_verify on CUDA (tree_verify_cuda.cpp, host C++) and its kernels
// (tree_verify_cuda.cu). Light on purpose: no JSON, no attnbench headers beyond the parameter struct.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference/decoding/tree_common.h"

namespace attnbench::cuda::tree_verify {

inline constexpr int kNodeMaxThreads = 512;   // node kernel: a CTA per (tree, node) row
inline constexpr int kPathMaxThreads = 256;   // path kernel: a CTA per tree
inline constexpr int kWalkMaxThreads = 1024;  // walk kernel (stochastic modes): a CTA per row
inline constexpr int64_t kWaves = 4;          // of resident CTAs at most, in a grid (they stride)

// A node's figures, from the node kernel to the path kernel: its argmax (the lowest index among
// equal maxima) and, for typical acceptance, τ = min(ε, δ·expf(−H)) with H summed in fp64.
struct NodeStat {
  int32_t argmax;
  float tau;
};

struct Params {
  decoding::TreeVerifyParams s;
  const float* probs;        // [batch, n, V]
  const int32_t* tokens;     // [batch, n]; the stochastic modes: [rows, n]
  const int32_t* retrieve;   // [batch, n, D + 1]
  const int32_t* n_leaves;   // [batch]
  NodeStat* stats;           // [batch, n]: workspace, allocated in prepare()
  int32_t* tokens_out;       // [batch, D + 1]
  int32_t* emitted;          // [batch]
  int32_t* accept_len;       // [batch]
  int32_t* best_path;        // [batch]
  int32_t* accepted_nodes;   // [batch, D + 1]
  // The stochastic modes (rows in place of batch in the outputs):
  const float* draft_probs;  // [batch, n, V]
  const int32_t* parents;    // [batch, n]
  double* scratch;           // [walk CTAs][2][V]: a row's residual w and (without replacement) draft g
  uint32_t domain;           // the draws' domain (rng.h)
};

// Threads of a node row's CTA: whole warps, about 8 float4 per thread per row, 32 to 512 (a small
// vocabulary leaves no idle warps, so more of its CTAs share an SM).
inline int node_threads(int32_t vocab) {
  const int64_t per = (static_cast<int64_t>(vocab) + 31) / 32;  // 8 float4 a thread
  const int64_t warps = (per + 31) / 32;
  return static_cast<int>(warps >= kNodeMaxThreads / 32 ? kNodeMaxThreads : (warps < 1 ? 32 : warps * 32));
}

// Threads of a tree's CTA: a warp per 32 leaf paths (at most n), up to kPathMaxThreads.
inline int path_threads(int32_t nodes) {
  const int warps = (nodes + 31) / 32;
  return warps >= kPathMaxThreads / 32 ? kPathMaxThreads : (warps < 1 ? 32 : warps * 32);
}

// Threads of a walk CTA: whole warps, about 16 tokens a thread, 32 to kWalkMaxThreads (the V-wide
// passes of a row are its only parallel work).
inline int walk_threads(int32_t vocab) {
  const int64_t warps = (static_cast<int64_t>(vocab) + 16 * 32 - 1) / (16 * 32);
  return static_cast<int>(warps >= kWalkMaxThreads / 32 ? kWalkMaxThreads : (warps < 1 ? 32 : warps * 32));
}

// How many CTAs of `threads` of each kernel fit an SM (no dynamic shared memory).
cudaError_t configure(int node_threads, int path_threads, int* node_ctas_per_sm, int* path_ctas_per_sm);
cudaError_t configure_walk(int walk_threads, int* walk_ctas_per_sm);

// The node kernel (`ctas` CTAs striding over the batch·n rows), then the path kernel (`ctas`
// striding over the trees), both on `stream`.
cudaError_t node_launch(const Params& p, int64_t ctas, int threads, cudaStream_t stream);
cudaError_t path_launch(const Params& p, int64_t ctas, int threads, cudaStream_t stream);
// The stochastic modes: `ctas` CTAs (each with its scratch slot) striding over the rows.
cudaError_t walk_launch(const Params& p, int64_t ctas, int threads, cudaStream_t stream);

}  // namespace attnbench::cuda::tree_verify
