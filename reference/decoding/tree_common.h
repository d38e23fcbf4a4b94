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
  X(i32, batch)                                                                    \
  X(i32, nodes)       /* n: tree tokens per row, node 0 the root */                \
  X(i32, max_depth)   /* D: retrieve rows hold D + 1 nodes, outputs D + 1 tokens */ \
  X(i32, vocab)       /* V */                                                      \
  X(i32, mode)        /* 0 greedy, 1 typical */                                    \
  X(f32, epsilon)     /* typical: the threshold's cap */                           \
  X(f32, delta)       /* typical: the entropy factor */

#ifdef __cplusplus
#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(TreeParams, ATTNBENCH_TREE_FIELDS);

TreeParams tree_params(const Case& c);

ATTNBENCH_PARAM_STRUCT(TreeVerifyParams, ATTNBENCH_TREE_VERIFY_FIELDS);
inline constexpr int32_t kTreeGreedy = 0, kTreeTypical = 1;

TreeVerifyParams tree_verify_params(const Case& c);

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
