// eagle2_tree's parameter struct (reference/decoding/eagle2_tree.cpp): one field list for C++, CUDA
// and GLSL (C++ lives inside __cplusplus), as tree_common.h.
#ifndef ATTNBENCH_EAGLE2_COMMON_H
#define ATTNBENCH_EAGLE2_COMMON_H

#define ATTNBENCH_EAGLE2_FIELDS(X)                                                   \
  X(i32, batch)                                                                      \
  X(i32, top_k)       /* k: children per frontier node, and the frontier's width */  \
  X(i32, depth)       /* D: levels of drafts below the root */                       \
  X(i32, vocab)       /* V */                                                        \
  X(i32, slots)       /* rows of draft logits per tree: 1 + (D - 1)·k */             \
  X(i32, candidates)  /* C: recorded candidates per tree, k + (D - 1)·k² */          \
  X(i32, nodes)       /* n: tree size, 1 + min(total_tokens, C) */                   \
  X(i32, prefix)      /* the root's position id */

#ifdef __cplusplus
#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
class ParamSchema;
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(Eagle2Params, ATTNBENCH_EAGLE2_FIELDS);

Eagle2Params eagle2_params(const Case& c);

// The builder's parameters (batch, top_k, depth ≥ min_depth, total_tokens, vocab, prefix) and the
// rule top_k ≤ vocab: eagle2_tree's, and those of a draft that feeds it (jakiro).
void add_tree_builder_params(ParamSchema& schema, double min_depth, int64_t vocab, const char* vocab_doc);

// The tree_mask case over eagle2_tree's tree (nodes, max_depth = D, prefix, batch): the stage each
// backend runs after building the parents, over the same buffers.
Case eagle2_mask_case(const Case& c);

// Candidate c's place: level 1 holds c < k (the root's children by rank); level l ≥ 2 starts at
// k + (l − 2)·k², and c = start + s·k + r is rank r among the children of frontier slot s, whose
// logits are draft_logits row 1 + (l − 2)·k + s.
inline int64_t eagle2_level_start(int64_t k, int64_t level) { return level == 1 ? 0 : k + (level - 2) * k * k; }

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
