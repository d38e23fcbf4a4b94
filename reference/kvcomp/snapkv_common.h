// What every backend's SnapKV scorer needs beyond the family's SelectionParams (semantics:
// snapkv_scorer.h). Light on purpose: CUDA device code and the Vulkan shaders include it (the
// shaders read only the field list; C++ lives inside __cplusplus).
//
// The scorer ranks the candidates [sinks, sinks + candidates) by the mean softmax of the last
// obs_window queries of the prompt (window query i sits at position kv_len − obs_window + i and
// sees keys j ≤ its position), pooled along the candidates, averaged over the heads of a score
// row: the group's query heads, or every query head of the sequence (ScoreScope::per_sequence).
// With log_decay = ln γ < 0 window query i's probabilities count γ^(w−1−i) (ZeroMerge's decayed
// column sums; a weight that underflows fp32 counts 0): snapkv_query_weight().
#ifndef ATTNBENCH_SNAPKV_COMMON_H
#define ATTNBENCH_SNAPKV_COMMON_H

#include "scored_selection_common.h"

#define ATTNBENCH_SNAPKV_FIELDS(X)                                                         \
  X(i32, obs_window)  /* w: the last w queries vote */                                     \
  X(i32, pool_radius) /* (pool_kernel - 1) / 2 */                                          \
  X(i32, pool_mode)   /* PoolMode: 0 mean of in-range keys, 1 max, 2 sum / kernel */    \
  X(f32, scale)       /* 1 / sqrt(head_dim) */                                             \
  X(i32, visible_mean) /* 1: divide by the window queries that see the key, not by w */    \
  X(i32, candidate_softmax) /* 1: each softmax over the candidates alone, not every visible key */ \
  X(f32, log_decay)   /* ln γ: window query i's probabilities weighted γ^(w−1−i) (ZeroMerge); 0: none */

#ifdef __cplusplus
#include <cmath>
#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench::kvcomp {

ATTNBENCH_PARAM_STRUCT(SnapkvParams, ATTNBENCH_SNAPKV_FIELDS);

// The scorer's parameters of a case of a method built on SnapkvScored (snapkv_scorer.cpp).
SnapkvParams snapkv_params(const Case& c);

// The divisor of key j's window sum: w, or with visible_mean the window queries that see j,
// min(w, kv_len − j) (H2O's column sums normalised as kvpress's mean over the visible queries).
ATTNBENCH_HD inline int64_t snapkv_divisor(const SelectionParams& s, const SnapkvParams& m, int64_t j) {
  const int64_t seen = int64_t{s.kv_len} - j;
  return m.visible_mean && seen < m.obs_window ? seen : m.obs_window;
}

// The weight of window query i's probabilities: γ^(w−1−i), 1 without decay.
ATTNBENCH_HD inline float snapkv_query_weight(const SnapkvParams& m, int64_t i) {
  return m.log_decay == 0.0f ? 1.0f : expf(m.log_decay * static_cast<float>(m.obs_window - 1 - i));
}

// Keys visible to window query i (0-based): j < kv_len − w + i + 1 (bottom-right causal).
ATTNBENCH_HD inline int64_t snapkv_visible_end(const SelectionParams& s, const SnapkvParams& m, int64_t i) {
  const int64_t end = int64_t{s.kv_len} - m.obs_window + i + 1;
  return end < s.kv_len ? end : s.kv_len;
}

}  // namespace attnbench::kvcomp
#endif  // __cplusplus
#endif
