// What every backend's shared KV-selection stages need to know about a case (the contract:
// scored_selection.h). Light on purpose: CUDA device code includes it, and so do the Vulkan
// shaders, which read only the field list below (C++ lives inside __cplusplus).
//
// A case is rows = batch·kv_heads caches of kv_len tokens each. Row r = b·kv_heads + g keeps
//   [0, sinks)                          forced (attention sinks)
//   top_k of the candidates              by score, the tie rule below
//   [kv_len − recent, kv_len)            forced (recent window, last token)
// where the candidates are tokens sinks .. sinks + candidates − 1 and their scores lie in a buffer
// [score rows, candidates] f32 (score row = r, or b when one ranking serves every KV head). Kept
// indices are written ascending (sinks < candidates < recent, so the three parts are in order),
// −1 beyond the row's length up to `capacity`.
// Everything is kept (sinks = kv_len, candidates = top_k = recent = 0) when the budget covers the
// sequence. With row_budgets, row r keeps row_budget[r] ≥ sinks + recent tokens (per-head budgets);
// otherwise every row keeps `kept`. With across_heads (AdaKV) the row budgets come from the scores:
// per sequence, every row's best `floor` candidates count first (as if scored +inf), then the best
// kv_heads·(top_k − floor) of the rest across its rows (larger score, then smaller g·candidates + j;
// top_k is the mean candidates per row); row r's budget is sinks + recent + its count, and its
// kept candidates are its best that many by the tie rule — the same set (within a row the order
// of g·candidates + j is the order of j).
// A row whose budget keeps all of its candidates reads no score: every select stage takes them in
// order, without ranking, when its top_k is the candidate count (and none when it is 0). So where
// every row keeps none or all of its candidates — a positional method with per-row budgets
// (DuoAttention's streaming and retrieval heads), or per-head budgets that happen to cover every
// head — scores_needed(const Case&) is false and no impl runs its scorer: the score buffer stays
// unwritten and unread. That is decided on the host from the case (the planned row budgets), not
// by a field below: the list is in every shader's push-constant block, which the scorers' blocks
// (this list, their parameters and their plan) fill to Vulkan's 128-byte minimum.
#ifndef ATTNBENCH_SCORED_SELECTION_COMMON_H
#define ATTNBENCH_SCORED_SELECTION_COMMON_H

#define ATTNBENCH_SELECTION_FIELDS(X)                                                           \
  X(i32, batch)                                                                                 \
  X(i32, q_heads)                                                                               \
  X(i32, kv_heads)                                                                              \
  X(i32, group)         /* q_heads / kv_heads */                                                \
  X(i32, head_dim)                                                                              \
  X(i32, kv_len)        /* tokens in the cache of every row */                                  \
  X(i32, capacity)      /* kept_idx's last dimension: the most any row keeps */                 \
  X(i32, sinks)         /* forced: tokens [0, sinks) */                                          \
  X(i32, recent)        /* forced: tokens [kv_len - recent, kv_len) */                          \
  X(i32, candidates)    /* scored tokens sinks .. sinks + candidates - 1 */                     \
  X(i32, top_k)         /* candidates kept by score in every row (uniform budgets) */          \
  X(i32, kept)          /* sinks + top_k + recent: each row's length (uniform budgets) */       \
  X(i32, shared_scores) /* 1: one score row per sequence, used by all its KV heads */          \
  X(i32, row_budgets)   /* 1: row r keeps row_budget[r] tokens, forced ones included */        \
  X(i32, across_heads)  /* 1: AdaKV's budgets, chosen across the sequence's KV heads */        \
  X(i32, floor)         /* across_heads: candidates each row keeps by its own ranking */       \
  X(i32, elem_bytes)    /* bytes of one K or V element */                                     \
  X(i32, sparse_step)   /* 1: selection-only: the kept set feeds a decode step over the cache */

#ifdef __cplusplus
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::kvcomp {

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS);

// The selection of a case of a method built on ScoredSelection (scored_selection.cpp).
SelectionParams selection_params(const Case& c);
// Each row's kept count planned from the case, which an impl uploads to the select stage's
// row_budget: per-row budgets (BudgetPolicy::per_row), or under across_heads the forced tokens
// alone, which the across stage overwrites when it chooses; empty with a uniform budget.
std::vector<int32_t> planned_row_budgets(const Case& c);
// Whether an impl runs its scorer: some row keeps part of its candidates, chosen by score (false
// when every row keeps none or all of them; see above).
bool scores_needed(const Case& c);
// Merged slots per row (merged_slots.h): 0 unless the method merges what it evicts, when every
// backend's family impl runs its merge stage after the gather.
int64_t merged_slots(const Case& c);
// Whether a selection-only case reuses a cached selection where its query is close to the cached
// one (selection_cache.h): every backend's family impl then computes the cosines first.
bool selection_cache_on(const Case& c);
// The cosine threshold of such a case.
float selection_cache_threshold(const Case& c);

ATTNBENCH_HD inline int64_t cache_rows(const SelectionParams& s) { return int64_t{s.batch} * s.kv_heads; }
ATTNBENCH_HD inline int64_t score_rows(const SelectionParams& s) { return s.shared_scores ? s.batch : cache_rows(s); }
// The score row that cache row `row` selects from.
ATTNBENCH_HD inline int64_t score_row_of(const SelectionParams& s, int64_t row) {
  return s.shared_scores ? row / s.kv_heads : row;
}
// Query heads behind one score row: the KV head's group, or every query head of the sequence. A
// score row r's heads are query heads r·n .. r·n + n − 1 of the flattened [batch·q_heads].
ATTNBENCH_HD inline int32_t heads_per_score_row(const SelectionParams& s) { return s.shared_scores ? s.q_heads : s.group; }
// Whether some candidate may be kept by score, from the shapes alone (the across stage's test).
// An impl asks scores_needed(const Case&), which also knows the per-row budgets.
ATTNBENCH_HD inline bool scores_needed(const SelectionParams& s) {
  return s.candidates > 0 && (s.top_k > 0 || (s.row_budgets && !s.across_heads));
}
// The kept count of a row given its own budget (forced tokens included): at least the forced
// tokens, at most min(kv_len, capacity).
ATTNBENCH_HD inline int32_t clamp_row_budget(const SelectionParams& s, int32_t budget) {
  const int32_t lo = s.sinks + s.recent, hi = s.kv_len < s.capacity ? s.kv_len : s.capacity;
  return budget < lo ? lo : budget > hi ? hi : budget;
}
// Candidates kept by score in a row that keeps `kept` tokens in all.
ATTNBENCH_HD inline int32_t top_k_of(const SelectionParams& s, int32_t kept) { return kept - s.sinks - s.recent; }
// The token at position r of a row keeping `kept` tokens, for r among the forced ones (r < sinks,
// or r ≥ kept − recent).
ATTNBENCH_HD inline int32_t forced_token(const SelectionParams& s, int32_t kept, int32_t r) {
  return r < s.sinks ? r : s.kv_len - (kept - r);
}

// The family's pooling of raw scores along the candidates (kernel 2r + 1, same padding).
enum PoolMode : int32_t {
  pool_avg = 0,         // the mean of the in-range keys (padding ignored)
  pool_max = 1,         // the max of the in-range keys
  pool_avg_padded = 2,  // the sum of the in-range keys / kernel: padding counted as zeros (kvpress)
};

// The tie rule of every selection: the k best of scores[0, n) (larger score first, then smaller
// index), written to out[0, k) in ascending index order. `order` is scratch of n entries.
template <typename Score, typename Index>
void select_top_k(const Score* scores, int64_t n, int64_t k, Index* order, Index* out) {
  std::iota(order, order + n, Index{0});
  const auto better = [scores](Index a, Index b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; };
  if (k < n) std::nth_element(order, order + k, order + n, better);
  std::copy_n(order, k, out);
  std::sort(out, out + k);
}

}  // namespace attnbench::kvcomp
#endif  // __cplusplus
#endif
