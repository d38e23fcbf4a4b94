// The KV-selection family's shared stages on CUDA (the contract: reference/kvcomp/
// scored_selection.h), used by every method's impl through scored_selection_cuda.h. Light on
// purpose: no JSON, no attnbench headers beyond the family's parameter struct.
//   pool    raw [batch·q_heads, candidates] → scores [score rows, candidates]: over the keys
//           within pool_radius by kvcomp::PoolMode (max, the mean of in-range keys, or their sum
//           / kernel), then the mean over the score row's heads in order (heads_per_score_row:
//           the group's, or the sequence's), one CTA per score row and kPoolThreads candidates
//   across  AdaKV's row budgets (sel.across_heads), after the scores and before the select, from
//           the select kernel itself so the tie rule is the same: (floors) each row's best
//           `floor` candidates; (boost) the scores copied with those set to +inf; (across) the
//           best kv_heads·top_k of each sequence's boosted scores, one row of kv_heads·candidates
//           flat indices g·candidates + j per sequence; (count) row_budget[b·kv_heads + g] =
//           sinks + recent + the flat indices in row g's range (a binary search: they ascend)
//   select  one CTA of kSelectThreads per cache row: scores become order-preserving 32-bit keys
//           (float bits, sign-flipped), an MSB-first radix select (4 passes of 8 bits, a shared
//           histogram with warp-aggregated atomics) finds τ, the key of the top_k-th best, and
//           how many keys equal to τ are kept; one pass in index order then keeps every key > τ
//           and the first `need` keys == τ: exactly the tie rule (larger score first, then smaller
//           index), ascending by construction (two block-wide ballot scans per 1024 keys). Rows
//           up to kSelectCachedKeys candidates keep their keys in shared memory across the
//           passes; longer ones reread the scores (L2). Then the forced tokens, −1 beyond the
//           row's length, the length. A row that keeps every candidate (or none) reads no score.
//   gather  k_kept, v_kept rows from k, v at kept_idx (a warp per kept row, the widest word the
//           row allows), zeros beyond each row's length: bit-exact copies
//   merge   a merging method's dense slots (reference/kvcomp/merged_slots.h), after the gather:
//           the tokens not in a row's kept_idx, ascending, cut into M contiguous groups (the first
//           (evicted mod M) one longer); one CTA per (row, slot) finds its group's tokens by binary
//           search in the ascending kept_idx (the evicted token of rank e is e + #{i : kept_idx[i]
//           − i ≤ e}), a chunk of them at a time into shared memory, and its threads, over K's and
//           V's head_dim (16-byte words where the row allows), sum them in order in fp32, divide by
//           the group's size and store the mean in the storage type; w_merged = the size (an
//           empty group: zeros, weight 0)
//   cache   the selection cache of a selection-only method (kvcomp::selection_cache_on(c):
//           tokenselect; reference/kvcomp/selection_cache.h), two kernels. hit: one CTA of
//           kCacheThreads per score row, the cosine of the row's decode queries q and q_cached, each
//           flattened over the row's heads (heads_per_score_row · head_dim values, contiguous in
//           [batch, q_heads, 1, head_dim]): three fp32 sums (q·q_c, ‖q‖², ‖q_c‖²), each thread's
//           strided values in order (fmaf), then the warps' shuffle trees and warp 0's over the
//           warps, a fixed order (a rerun gives the same bits); cache_hit = dot / sqrtf(na·nb) ≥
//           threshold (0 where a norm is 0). take, after select: one CTA per cache row whose score
//           row hit overwrites its kept list with [0, sinks), topk_cached[score row, 0..top_k)
//           (ascending), [kv_len − recent, kv_len), −1 beyond sel.kept up to the capacity, kept_len
//           = sel.kept; a row that missed keeps select's lists. One instance each (the element
//           type a runtime switch).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention/attention_launch.h"  // Elem
#include "reference/kvcomp/scored_selection_common.h"

namespace attnbench::cuda::kv {

struct StageArgs {
  kvcomp::SelectionParams sel;
  const float* raw;           // pool's input [batch·q_heads, candidates]
  float* scores;              // [score rows, candidates]
  int32_t* row_budget;        // [rows] with per-row budgets (the across stage writes it)
  int32_t* kept_idx;          // [rows, capacity]
  int32_t* kept_len;          // [rows]
  const void* k;              // [rows, kv_len, head_dim]
  const void* v;
  void* k_kept;               // [rows, capacity, head_dim]
  void* v_kept;
  int pool_radius;            // pool: (pool_kernel − 1) / 2
  int32_t pool_mode;          // pool: kvcomp::PoolMode
};

// The across stage's workspaces (allocated by the caller when sel.across_heads and scores are
// needed): floor_idx [rows, floor], boosted [rows, candidates] (unused when floor = 0: the scores
// are read as they are), across_idx [batch, kv_heads·top_k], lens [rows] (the select kernel's
// kept_len of the first two steps, never read).
struct AcrossArgs {
  int32_t* floor_idx;
  float* boosted;
  int32_t* across_idx;
  int32_t* lens;
};

// The merge stage's outputs (kvcomp::merged_slots(c) = slots > 0).
struct MergeArgs {
  int32_t slots;    // M: dense slots per row
  attn::Elem elem;  // the storage type of k, v, k_merged, v_merged
  void* k_merged;   // [rows, slots, head_dim]
  void* v_merged;
  float* w_merged;  // [rows, slots]
};

// The selection cache's buffers (kvcomp::selection_cache_on(c)).
struct CacheArgs {
  const void* q;               // [batch, q_heads, 1, head_dim] elem
  const void* q_cached;        // the same layout
  const int32_t* topk_cached;  // [score rows, top_k], absolute positions, ascending
  int32_t* cache_hit;          // [score rows]: 1 where cos(q, q_cached) ≥ threshold
  float threshold;
  attn::Elem elem;             // the storage type of q and q_cached
};

inline constexpr int kPoolThreads = 256;  // candidates per pool CTA
inline constexpr int kSelectThreads = 1024;
inline constexpr int kSelectCachedKeys = 11264;  // candidates kept in shared memory (44 KiB)
inline constexpr int kGatherRows = 8;            // kept rows per gather CTA (a warp each)
inline constexpr int kAcrossThreads = 256;       // boost: elements per CTA; count: rows per CTA
inline constexpr int kMergeThreads = 256;        // the most threads of a merge CTA
inline constexpr int kCacheThreads = 256;        // threads of a cache hit or take CTA

cudaError_t pool_launch(const StageArgs& a, cudaStream_t stream);
cudaError_t select_launch(const StageArgs& a, cudaStream_t stream);
cudaError_t gather_launch(const StageArgs& a, cudaStream_t stream);
// The merge stage (after select, which wrote a.kept_idx and a.kept_len): m's slots from a.k, a.v.
// Its CTAs take (row, slot) tasks in turn, so any rows·slots fits one grid.
cudaError_t merge_launch(const StageArgs& a, const MergeArgs& m, cudaStream_t stream);
// The across stage (a.sel.across_heads with scores): a.row_budget from a.scores, via w.
cudaError_t across_launch(const StageArgs& a, const AcrossArgs& w, cudaStream_t stream);
// The selection cache's decision: c.cache_hit from c.q and c.q_cached (a.sel's shapes).
cudaError_t cache_hit_launch(const StageArgs& a, const CacheArgs& c, cudaStream_t stream);
// The selection cache's kept lists (after select, or alone when every row hit): a.kept_idx and
// a.kept_len of each cache row whose score row has c.cache_hit set, from c.topk_cached.
cudaError_t cache_take_launch(const StageArgs& a, const CacheArgs& c, cudaStream_t stream);

// The largest grid any stage launches for a selection (every CTA index is one grid x < 2^31).
inline int64_t stages_grid(const kvcomp::SelectionParams& s) {
  const int64_t rows = kvcomp::cache_rows(s), c = s.candidates > 0 ? s.candidates : 1;
  const int64_t pool = kvcomp::score_rows(s) * ((c + kPoolThreads - 1) / kPoolThreads);
  const int64_t gather = rows * ((s.capacity + kGatherRows - 1) / kGatherRows);
  // select: one CTA per row; across: the boost's rows·candidates threads (the rest is ≤ rows CTAs).
  const int64_t boost = s.across_heads ? (rows * c + kAcrossThreads - 1) / kAcrossThreads : 0;
  int64_t most = rows > pool ? rows : pool;
  most = most > gather ? most : gather;
  return most > boost ? most : boost;
}

}  // namespace attnbench::cuda::kv
