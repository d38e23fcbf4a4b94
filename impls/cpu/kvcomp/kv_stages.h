// The KV-selection family's shared stages on the CPU (the contract: reference/kvcomp/
// scored_selection.h). A method's impl computes scores; these select, gather and pool for every
// method alike:
//   pool    raw scores per query head [batch·q_heads, candidates] → [batch·kv_heads, candidates]:
//           max or mean (in-range keys only) over the keys within `radius`, then the mean over
//           the group's query heads, heads in order (kv_pool_kernel.inl, vectorised per ISA)
//   across  AdaKV's budgets (s.across_heads), one sequence: every row's floor counts first, then
//           the best of the rest across its rows; each row's budget is its count plus the forced
//   select  one row: the forced tokens, the best top_k candidates by the tie rule, −1 beyond the
//           row's length, and the length
//   gather  one row of K or V: the kept rows copied (consecutive indices as one copy), zeros
//           beyond the length
//   merge   one row of K or V: the evicted rows' means in contiguous groups (merging methods)
#pragma once

#include <cstddef>
#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"
#include "reference/kvcomp/scored_selection_common.h"

namespace attnbench::cpu::kv {

struct PoolKernels {
  // scores[0, C) of score row `row` from raw rows row·G .. row·G + G − 1 (G: its heads), pooled
  // by kvcomp::PoolMode `mode`.
  void (*pool_group)(const float* raw, int64_t C, int64_t G, int64_t radius, int32_t mode, int64_t row, float* scratch,
                     float* scores);
};

// Floats of scratch pool_group needs.
inline size_t pool_scratch_floats(int64_t C, int64_t radius) { return static_cast<size_t>(2 * (C + 2 * radius + 32) + C); }

// Row `row`: kept_idx[row·capacity ..] and kept_len[row]; `order` is scratch of 2·candidates ints.
// `scores` is the score buffer [score rows, candidates]; row_budget is read when s.row_budgets.
// A row that keeps every candidate (or none) reads no score.
void select_row(const kvcomp::SelectionParams& s, const float* scores, const int32_t* row_budget, int64_t row,
                int32_t* order, int32_t* kept_idx, int32_t* kept_len);

// AdaKV's row budgets of sequence b (s.across_heads): row_budget[b·kv_heads + g] for every g.
// `order` is scratch of across_scratch_ints(s) ints, `boosted` of kv_heads·candidates floats.
inline size_t across_scratch_ints(const kvcomp::SelectionParams& s) {
  return static_cast<size_t>(2) * s.kv_heads * s.candidates;
}
void budgets_across_heads(const kvcomp::SelectionParams& s, const float* scores, int64_t b, int32_t* order,
                          float* boosted, int32_t* row_budget);

// Rows of one tensor ([rows, kv_len, head_dim] → [rows, capacity, head_dim]) at the kept indices.
void gather_row(const kvcomp::SelectionParams& s, const int32_t* kept_idx, const int32_t* kept_len, const void* src,
                void* dst, int64_t row);

// The selection cache (reference/kvcomp/selection_cache.h): the cosine of n values of q and
// q_cached (one score row's heads, flattened) in fp32, sums in order.
float cache_cosine(const void* q, const void* q_cached, DType dtype, int64_t n);
// A row that reuses the cached selection: kept_idx = the sinks, the cached top_k (absolute
// positions, ascending) and the recent window, in order; kept_len unchanged (the row's budget).
void take_cached_row(const kvcomp::SelectionParams& s, const int32_t* topk_cached, int64_t row, int32_t* kept_idx);

// The merged slots of one row of K or V (reference/kvcomp/merged_slots.h): the tokens not in the
// row's kept_idx (ascending) in `slots` contiguous groups, each group's mean in fp32 (a running sum
// in order, then divided by its size) into dst [rows, slots, head_dim] in the storage dtype, and
// with `weights` non-null each group's size into weights [rows, slots]. `acc` is head_dim floats.
void merge_row(const kvcomp::SelectionParams& s, int64_t slots, DType dtype, const int32_t* kept_idx, const int32_t* kept_len,
               const void* src, void* dst, float* weights, int64_t row, float* acc);

}  // namespace attnbench::cpu::kv

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(kv::PoolKernels);
}
