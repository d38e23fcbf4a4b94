// The output half of the KV-compression family (scored_selection.h is the selection half): the
// compacted cache's declarations and checks, its quality figures and its decode companions.
//
// The compacted cache, per sequence b and KV head g (row = b·kv_heads + g):
//   kept_idx [batch, kv_heads, capacity] i32, ascending, −1 beyond kept_len
//   kept_len [batch, kv_heads] i32
//   k_kept, v_kept [batch, kv_heads, capacity, head_dim] in the case dtype, zeros beyond kept_len
// The held-out queries q_future [batch, q_heads, n_future, head_dim] come from G-KV (gkv.h).
#pragma once

#include <cstdint>
#include <vector>

#include "attnbench/json.h"
#include "attnbench/method.h"
#include "attnbench/tensor.h"

namespace attnbench::kvcomp {

struct CompactedCache {
  int64_t batch, q_heads, kv_heads, head_dim, kv_len;
  int64_t capacity;   // kept_idx's last dimension
  int64_t kept;       // tokens kept per row when every row keeps the same number, else the mean
  int64_t n_future;   // held-out queries per query head
  bool ragged_rows;   // rows keep different numbers of tokens (per-head budgets)
};

// Rows [first, first + n) of a [.., d] tensor as fp64, converted once.
std::vector<double> rows_f64(const HostTensor& t, int64_t first, int64_t n, int64_t d);

// The parameters every compacted-cache method's schema starts with, in this order: batch,
// q_heads, kv_heads, head_dim, kv_len; and the rule q_heads % kv_heads == 0.
void add_cache_params(ParamSchema& schema);

// The compacted cache's declared outputs in this order: kept_idx (class `selection`, ascending,
// −1 beyond kept_len), kept_len (EXACT), k_kept and v_kept in `dtype` (class `selection`,
// compared as gathers at the impl's own indices; 0 beyond kept_len).
std::vector<OutputDecl> compacted_cache_outputs(const CompactedCache& s, DType dtype, CheckClass selection);

// The checks of a compacted cache in output order: kept_len (its own check: EXACT for a uniform
// or per-row budget), the method's check of kept_idx, and k_kept, v_kept equal to k, v gathered
// at the impl's kept_idx, bit for bit.
CheckReport check_compacted_cache(const std::vector<OutputDecl>& decls, const TensorMap& inputs,
                                  const TensorMap& got, OutputCheck kept_len_check, OutputCheck kept_idx_check);

// Exact fp64 attention of each held-out query over the full cache and over the impl's compacted
// cache (its own kept_idx, kept_len, k_kept, v_kept), with s = 1/√head_dim:
//   compression_ratio  rows·kv_len / Σ kept_len
//   kv_bytes_full      2·rows·kv_len·head_dim·sizeof(dtype)   (K and V)
//   kv_bytes_kept      2·Σ kept_len·head_dim·sizeof(dtype)
//   index_bytes        Σ kept_len·4
//   future_queries     n_future
//   out_rel_l2         ‖o_c − o_f‖ / ‖o_f‖ over every held-out query row together
//   out_cos            cosine of o_c and o_f over the same rows
//   attn_recall        mean over rows of the full softmax's mass on the kept keys
// (the last three only when n_future > 0). Parallel over rows; each slice sequential.
// With merged slots in the outputs (k_merged, v_merged, w_merged: merged_slots.h), the compacted
// attention also reads them, each slot's logits raised by merge_lambda·ln w (ZeroMerge's
// compensation; an empty slot, w = 0, is not read), and kv_bytes_kept counts them and their weights.
Json compacted_cache_quality(const CompactedCache& s, DType dtype, const TensorMap& inputs, const TensorMap& outputs,
                             double merge_lambda = 1.0);

// The companions the leaderboard joins: gqa decode (q_len 1) over the compacted cache
// (`decode_compressed`, kv_len := kept; with ragged rows, per-(sequence, KV head) lengths up to
// the capacity) and over the full one (`decode_full`), on the same backend. The leaderboard's
// speedup of a compression method is decode_full over decode_compressed.
std::vector<RelatedCase> decode_companions(const CompactedCache& s, DType dtype);

}  // namespace attnbench::kvcomp
