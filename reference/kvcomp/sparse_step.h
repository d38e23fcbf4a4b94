// The selection-only half of the KV family (scored_selection.h is the selection half,
// compacted_cache.h the output of the methods that evict): a method that keeps the whole cache and
// reads a subset of it per decode step (tokenselect, quest). Its selection is the family's —
// forced tokens plus the best-scored candidates per (sequence, KV head), kept_idx ascending — and
// instead of a compacted copy it yields the step itself: the decode query's attention over the
// kept keys, read in place (gather_decode's stage: attention_common.h, key_index = 2).
//
//   q        [batch, q_heads, 1, head_dim]        the decode query, at position kv_len − 1 (the
//                                                 last of G-KV's window: its own key is the last)
//   kept_idx [batch, kv_heads, capacity] i32      the method's check (SET with its tie band)
//   kept_len [batch, kv_heads] i32                EXACT
//   O        [batch, q_heads, 1, head_dim]        TOL: fp64 attention over the impl's own kept_idx,
//                                                 gated by the same-precision baseline over them
// Memory is unchanged; what the method saves is the bytes a step reads.
#pragma once

#include <vector>

#include "attnbench/json.h"
#include "attnbench/method.h"
#include "reference/attention/attention_spec.h"
#include "scored_selection_common.h"

namespace attnbench::kvcomp {

// The decode step over the kept set that every backend runs with its attention stage: one query
// per head, the lists kept_idx per KV head with lengths kept_len (head_lengths), capacity lists
// over kv_len cache rows, scale 1/√head_dim.
attention::AttentionParams sparse_step_params(const SelectionParams& s);

// The step's declared outputs after kept_idx and kept_len: O.
OutputDecl sparse_step_output(const SelectionParams& s, DType dtype);

// The decode query: the last row of the window queries q_obs [batch, q_heads, w, head_dim].
HostTensor decode_query(const HostTensor& q_obs, DType dtype);

// O in fp64 and in the same-precision baseline over a set (kept_idx i32, kept_len i32): the
// reference's own set for its O, an impl's for its check.
attention::DenseRows sparse_step_rows(const Case& c, const SelectionParams& s, const TensorMap& inputs,
                                      const HostTensor& kept_idx, const HostTensor& kept_len);

// O against fp64 attention over the impl's own kept_idx and kept_len (its set is checked apart).
OutputCheck check_sparse_step(const Case& c, const SelectionParams& s, const TensorMap& inputs, const TensorMap& got);

// Work of the step: the kept K and V rows, the lists, q and O.
Work sparse_step_work(const SelectionParams& s, const std::vector<int64_t>& kept, DType dtype);

// What a selection-only method saves and how faithful it stays (exact fp64 over the impl's own
// set), added to `q`:
//   selection_only           true: memory is unchanged
//   kv_bytes_kept            the whole cache (as kv_bytes_full)
//   kv_bytes_read_per_step   K and V of the kept keys plus the lists: what the step reads
//   read_ratio               full-cache decode's K and V bytes over kv_bytes_read_per_step
//   compression_ratio        rows·kv_len over the kept keys: the point the step reads at
//   attn_recall, out_rel_l2, out_cos    of the decode query itself (the set is chosen for it)
//   heldout_attn_recall, heldout_out_rel_l2   of the held-out queries over the same set
// The held-out figures of compacted_cache_quality() are renamed heldout_*, since a selection-only
// method selects again for every query.
void sparse_step_quality(const SelectionParams& s, DType dtype, const TensorMap& inputs, const TensorMap& outputs, Json& q);

// The companions: gather_decode over `budget` listed keys per KV head (`decode_sparse`: the step
// alone, without choosing the set) and
// gqa decode over the full cache (`decode_full`), on the same backend: the leaderboard pairs them
// (decode_sparse against decode_full) and times the whole step against decode_full.
std::vector<RelatedCase> sparse_step_companions(const SelectionParams& s, int64_t budget, DType dtype);

}  // namespace attnbench::kvcomp
