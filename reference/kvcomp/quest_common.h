// What every backend's quest scorer needs beyond the family's SelectionParams (semantics:
// quest.cpp). Light on purpose: CUDA device code and the Vulkan shaders include it (the shaders
// read only the field list; C++ lives inside __cplusplus).
//
// Whenever the scorer runs, the candidates are the full pages before the current one (sinks = 0,
// candidates = full·page_size): candidate token t belongs to page t / page_size, and the summaries
// kmin, kmax [batch·kv_heads, pages, head_dim] hold `pages` rows per KV head (the current page's
// too, which the bound never reads).
#ifndef ATTNBENCH_QUEST_COMMON_H
#define ATTNBENCH_QUEST_COMMON_H

#include "scored_selection_common.h"

#define ATTNBENCH_QUEST_FIELDS(X)                                                           \
  X(i32, page_size) /* P: tokens per page */                                               \
  X(i32, pages)     /* ceil(kv_len / P): summary rows per KV head */                        \
  X(f32, inv_group) /* 1 / group in fp32, rounded once on the host (the CPU kernel's) */

#ifdef __cplusplus
#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench::kvcomp {

ATTNBENCH_PARAM_STRUCT(QuestParams, ATTNBENCH_QUEST_FIELDS);

// The scorer's parameters of a quest case (quest.cpp).
QuestParams quest_params(const Case& c);

// Full pages before the current one: the pages the scorer bounds.
ATTNBENCH_HD inline int32_t quest_scored_pages(const SelectionParams& s, const QuestParams& m) {
  return s.candidates / m.page_size;
}

}  // namespace attnbench::kvcomp
#endif  // __cplusplus
#endif
