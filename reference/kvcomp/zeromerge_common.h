// What every backend's ZeroMerge decode steps need to know about a case (semantics:
// zeromerge_decode.cpp's header): one field list for C++, CUDA and GLSL (C++ lives inside
// __cplusplus), and the ring's arithmetic.
//
// A row is one (sequence, KV head): a cache of `budget` slots, each a key, a value, a weight w (the
// tokens merged into it) and a score s. Layout once full: [dense M | mergeable | ring R − 1], the
// dense slots 0 .. M − 1, the mergeable region M .. D − 1 with D = budget − tail + 1, the ring
// D .. budget − 1. Step t (0-based) finds fill(t) slots holding tokens; while fill < budget the new
// token is appended, afterwards the ring slot of full step f = t − (budget − filled) receives it.
#ifndef ATTNBENCH_ZEROMERGE_COMMON_H
#define ATTNBENCH_ZEROMERGE_COMMON_H

#define ATTNBENCH_ZEROMERGE_FIELDS(X)                                                          \
  X(i32, batch)                                                                                \
  X(i32, q_heads)                                                                              \
  X(i32, kv_heads)                                                                             \
  X(i32, group)      /* q_heads / kv_heads */                                                  \
  X(i32, head_dim)                                                                             \
  X(i32, budget)     /* slots of a row's cache */                                              \
  X(i32, tail)       /* R: the ring cycles over the last R − 1 slots */                        \
  X(i32, dense)      /* M: merged slots at the front */                                        \
  X(i32, filled)     /* slots holding tokens before the first step: min(kv_len, budget) */     \
  X(i32, steps)      /* decode steps of the case */                                            \
  X(i32, kv_len)     /* the prompt's length */                                                 \
  X(i32, metric_l2)  /* nearest dense slot: 0 largest dot product, 1 smallest squared L2 */    \
  X(i32, score_sum)  /* a merged slot's score: 0 the max of the two, 1 their sum */            \
  X(f32, scale)      /* 1 / sqrt(head_dim) */                                                  \
  X(f32, lambda)     /* compensation: logit += lambda · log w */                               \
  X(f32, decay)      /* gamma: s <- gamma · s + this step's attention */

#ifdef __cplusplus
#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::kvcomp {

ATTNBENCH_PARAM_STRUCT(ZeromergeParams, ATTNBENCH_ZEROMERGE_FIELDS);

// The parameters of a case of zeromerge_decode.
ZeromergeParams zeromerge_params(const Case& c);

// Slots holding tokens when step t begins.
ATTNBENCH_HD inline int32_t zm_fill(const ZeromergeParams& s, int32_t t) {
  return s.filled + t < s.budget ? s.filled + t : s.budget;
}
// The end of the mergeable region: slots [dense, zm_mergeable_end) hold the candidates of a merge.
ATTNBENCH_HD inline int32_t zm_mergeable_end(const ZeromergeParams& s) { return s.budget - s.tail + 1; }
// The ring slot step t writes (its cache full), the departing token's.
ATTNBENCH_HD inline int32_t zm_ring_slot(const ZeromergeParams& s, int32_t t) {
  const int32_t full_step = t - (s.budget - s.filled);
  return zm_mergeable_end(s) + full_step % (s.tail - 1);
}

}  // namespace attnbench::kvcomp
#endif  // __cplusplus
#endif
