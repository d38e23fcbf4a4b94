// tree_mask's parameter struct (reference/decoding/tree_mask.cpp): one field list for C++, CUDA and
// GLSL (C++ lives inside __cplusplus), as sampler_common.h.
#ifndef ATTNBENCH_TREE_COMMON_H
#define ATTNBENCH_TREE_COMMON_H

#define ATTNBENCH_TREE_FIELDS(X)                                                   \
  X(i32, batch)                                                                    \
  X(i32, nodes)       /* n: tree tokens per row, node 0 the root */                \
  X(i32, prefix)      /* tokens before the tree: the root's position id */         \
  X(i32, max_depth)   /* D: the deepest node's depth; retrieve rows hold D + 1 */  \
  X(i32, mask_words)  /* ceil(n / 32): 32-bit words of a mask row */

#ifdef __cplusplus
#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(TreeParams, ATTNBENCH_TREE_FIELDS);

TreeParams tree_params(const Case& c);

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
