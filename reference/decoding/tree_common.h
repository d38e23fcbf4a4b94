// The tree methods' parameter structs (reference/decoding/tree_mask.cpp, tree_verify.cpp): one field
// list each for C++, CUDA and GLSL (C++ lives inside __cplusplus), as sampler_common.h.
#ifndef ATTNBENCH_TREE_COMMON_H
#define ATTNBENCH_TREE_COMMON_H

#define ATTNBENCH_TREE_FIELDS(X)                                                   \
  X(i32, batch)                                                                    \
  X(i32, nodes)       /* n: tree tokens per row, node 0 the root */                \
  X(i32, prefix)      /* tokens before the tree: the root's position id */         \
  X(i32, max_depth)   /* D: the deepest node's depth; retrieve rows hold D + 1 */  \
  X(i32, mask_words)  /* ceil(n / 32): 32-bit words of a mask row */

// tree_verify (reference/decoding/tree_verify.cpp).
#define ATTNBENCH_TREE_VERIFY_FIELDS(X)                                            \
  X(i32, batch)       /* trees (1 in distribution mode: every row verifies tree 0) */ \
  X(i32, nodes)       /* n: tree tokens per row, node 0 the root */                \
  X(i32, max_depth)   /* D: retrieve rows hold D + 1 nodes, outputs D + 1 tokens */ \
  X(i32, vocab)       /* V */                                                      \
  X(i32, mode)        /* 0 greedy, 1 typical, 2 rejection, 3 rejection_wor */      \
  X(f32, epsilon)     /* typical: the threshold's cap */                           \
  X(f32, delta)       /* typical: the entropy factor */                            \
  X(i32, rows)        /* rows verified: batch, or draws in distribution mode */    \
  X(u32, seed_lo)     /* the case seed: the Philox key of the stochastic modes */  \
  X(u32, seed_hi)                                                                  \
  X(u32, accept_stream) /* FNV-1a of "spec.accept" (speculative_sampling's sites) */ \
  X(u32, race_stream)   /* FNV-1a of "spec.race" */

#ifdef __cplusplus
#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(TreeParams, ATTNBENCH_TREE_FIELDS);

TreeParams tree_params(const Case& c);

ATTNBENCH_PARAM_STRUCT(TreeVerifyParams, ATTNBENCH_TREE_VERIFY_FIELDS);
inline constexpr int32_t kTreeGreedy = 0, kTreeTypical = 1, kTreeRejection = 2, kTreeRejectionWor = 3;

TreeVerifyParams tree_verify_params(const Case& c);

ATTNBENCH_HD inline bool tree_stochastic(const TreeVerifyParams& s) { return s.mode >= kTreeRejection; }
// The tree (and probability rows) row r verifies: its own, or tree 0 in distribution mode.
ATTNBENCH_HD inline int64_t tree_of_row(const TreeVerifyParams& s, int64_t r) { return s.batch == 1 ? 0 : r; }
// Draw indices of the stochastic modes: speculative_sampling's sites and indices, so that a chain
// (node t's parent t − 1, max_depth = nodes − 1 = K) draws exactly what speculative_sampling draws.
ATTNBENCH_HD inline uint64_t tree_accept_index(const TreeVerifyParams& s, int64_t r, int64_t child) {
  return static_cast<uint64_t>(r * (s.nodes - 1) + child - 1);
}
ATTNBENCH_HD inline uint64_t tree_race_index(const TreeVerifyParams& s, int64_t r, int64_t node, int64_t token) {
  return static_cast<uint64_t>((r * s.nodes + node) * s.vocab + token);
}

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
