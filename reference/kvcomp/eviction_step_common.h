// What every backend's per-step eviction (phase decode of h2o and tova; contract:
// eviction_step.h) needs to know about a case. Light on purpose: CUDA device code includes it, and
// so do the Vulkan shaders, which read only the field list (C++ lives inside __cplusplus).
//
// A case is rows = batch·kv_heads caches of `slots` entries each: the budget's tokens at positions
// below kv_len − 1, in any order (pos says which), and in the last slot the new token, at position
// kv_len − 1. Per score row r — a (sequence, KV head), or the sequence with shared_scores — and
// slot i, given the attention's log-sum-exp lse_h of each query head (the step's decode):
//   a_{r,i}   = the mean over the row's heads h of exp(scale·q_h·k_{g(h),i} − lse_h)
//   score_i   = acc_{r,i} + a_{r,i} with `accumulate` (acc: [rows, slots − 1], none for the new
//               token), else a_{r,i}
//   key_i     = score_i / (kv_len − pos_i) with visible_mean, else score_i
//   evicted   = the slot of smallest key among those with pos_i < kv_len − recent (ties: the
//               larger position, the newer token), the same for every KV head of a shared row
#ifndef ATTNBENCH_EVICTION_STEP_COMMON_H
#define ATTNBENCH_EVICTION_STEP_COMMON_H

#define ATTNBENCH_STEP_FIELDS(X)                                                              \
  X(i32, batch)                                                                               \
  X(i32, q_heads)                                                                             \
  X(i32, kv_heads)                                                                            \
  X(i32, group)         /* q_heads / kv_heads */                                              \
  X(i32, head_dim)                                                                            \
  X(i32, slots)         /* budget + 1: the cache's tokens and the new one, last */            \
  X(i32, kv_len)        /* the sequence's length with the new token */                        \
  X(i32, recent)        /* positions >= kv_len - recent are never evicted */                  \
  X(i32, shared_scores) /* 1: one score row per sequence (all its query heads) */            \
  X(i32, accumulate)    /* 1: score = acc + this step's attention (H2O) */                    \
  X(i32, visible_mean)  /* 1: rank score / (kv_len - pos), the queries that saw the token */ \
  X(f32, scale)         /* 1 / sqrt(head_dim) */

#ifdef __cplusplus
#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::kvcomp {

ATTNBENCH_PARAM_STRUCT(StepParams, ATTNBENCH_STEP_FIELDS);

// The step of a decode-phase case of a method with one (eviction_step.cpp).
StepParams step_params(const Case& c);

ATTNBENCH_HD inline int64_t step_cache_rows(const StepParams& s) { return int64_t{s.batch} * s.kv_heads; }
ATTNBENCH_HD inline int64_t step_score_rows(const StepParams& s) { return s.shared_scores ? s.batch : step_cache_rows(s); }
ATTNBENCH_HD inline int32_t step_heads_per_row(const StepParams& s) { return s.shared_scores ? s.q_heads : s.group; }
// The cache row whose positions and accumulated scores a score row reads (a shared row: its
// sequence's first KV head; every KV head of a sequence holds the same tokens in the same slots).
ATTNBENCH_HD inline int64_t step_source_row(const StepParams& s, int64_t score_row) {
  return s.shared_scores ? score_row * s.kv_heads : score_row;
}
// Whether the token at position pos may be evicted.
ATTNBENCH_HD inline bool step_candidate(const StepParams& s, int32_t pos) { return pos < s.kv_len - s.recent; }
// Whether slot a (key ka, position pa) is evicted before slot b: smaller key, then larger position.
template <typename Key>
ATTNBENCH_HD inline bool step_evicts_first(Key ka, int32_t pa, Key kb, int32_t pb) {
  return ka < kb || (ka == kb && pa > pb);
}

}  // namespace attnbench::kvcomp
#endif  // __cplusplus
#endif
