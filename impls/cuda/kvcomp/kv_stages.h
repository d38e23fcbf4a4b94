// The KV-selection family's shared stages on CUDA (the contract: reference/kvcomp/
// scored_selection.h), used by every method's impl through scored_selection_cuda.h. Light on
// purpose: no JSON, no attnbench headers beyond the family's parameter struct.
//   pool    raw [batch·q_heads, candidates] → scores [batch·kv_heads, candidates]: max, or the
//           mean of in-range keys, over the keys within pool_radius, then the mean over the
//           group's query heads in order (one CTA per row and kPoolThreads candidates)
//   select  one CTA of kSelectThreads per cache row: scores become order-preserving 32-bit keys
//           (float bits, sign-flipped), an MSB-first radix select (4 passes of 8 bits, a shared
//           histogram with warp-aggregated atomics) finds τ, the key of the top_k-th best, and
//           how many keys equal to τ are kept; one pass in index order then keeps every key > τ
//           and the first `need` keys == τ: exactly the tie rule (larger score first, then smaller
//           index), ascending by construction (two block-wide ballot scans per 1024 keys). Rows
//           up to kSelectCachedKeys candidates keep their keys in shared memory across the
//           passes; longer ones reread the scores (L2). Then the forced tokens, −1 beyond the
//           row's length, the length.
//   gather  k_kept, v_kept rows from k, v at kept_idx (a warp per kept row, the widest word the
//           row allows), zeros beyond each row's length: bit-exact copies
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference/kvcomp/scored_selection_common.h"

namespace attnbench::cuda::kv {

struct StageArgs {
  kvcomp::SelectionParams sel;
  const float* raw;           // pool's input [batch·q_heads, candidates]
  float* scores;              // [score rows, candidates]
  const int32_t* row_budget;  // [rows] with per-row budgets
  int32_t* kept_idx;          // [rows, capacity]
  int32_t* kept_len;          // [rows]
  const void* k;              // [rows, kv_len, head_dim]
  const void* v;
  void* k_kept;               // [rows, capacity, head_dim]
  void* v_kept;
  int pool_radius;            // pool: (pool_kernel − 1) / 2
  bool pool_max;              // pool: max (else the mean of in-range keys)
};

inline constexpr int kPoolThreads = 256;  // candidates per pool CTA
inline constexpr int kSelectThreads = 1024;
inline constexpr int kSelectCachedKeys = 11264;  // candidates kept in shared memory (44 KiB)
inline constexpr int kGatherRows = 8;            // kept rows per gather CTA (a warp each)

cudaError_t pool_launch(const StageArgs& a, cudaStream_t stream);
cudaError_t select_launch(const StageArgs& a, cudaStream_t stream);
cudaError_t gather_launch(const StageArgs& a, cudaStream_t stream);

// The largest grid any stage launches for a selection (every CTA index is one grid x < 2^31).
inline int64_t stages_grid(const kvcomp::SelectionParams& s) {
  const int64_t rows = kvcomp::cache_rows(s), c = s.candidates > 0 ? s.candidates : 1;
  const int64_t pool = rows * ((c + kPoolThreads - 1) / kPoolThreads), gather = rows * ((s.capacity + kGatherRows - 1) / kGatherRows);
  return pool > gather ? pool : gather;
}

}  // namespace attnbench::cuda::kv
