// Merged slots: a compaction method that merges what it evicts (ZeroMerge) keeps, beside its
// compacted cache, M dense slots per row (sequence, KV head). The row's evicted tokens — every
// token not in kept_idx — in ascending position are cut into M contiguous groups, the first
// (evicted mod M) one token longer, and each group is averaged: k_merged and v_merged the mean of
// its keys and values, w_merged its size (0 and zero vectors for an empty group, when fewer than
// M tokens are evicted). Attention over the compressed cache reads a slot with its logit raised by
// λ·ln w (merge_lambda), so a slot counts as the w tokens it stands for.
//
//   outputs  k_merged, v_merged [batch, kv_heads, M, head_dim] in the case dtype (TOL: fp64 means,
//            the gate from the fp32 running sums); w_merged [batch, kv_heads, M] f32 (EXACT)
//   check    against the groups of the impl's own kept_idx (as the compacted copy's gathers are),
//            so a near-tie in the selection moves the groups' members without failing the means
// Every backend's family base impl runs the merge stage after the gather (impls/<backend>/kvcomp).
#pragma once

#include <vector>

#include "attnbench/method.h"
#include "scored_selection_common.h"

namespace attnbench::kvcomp {

struct MergeRule {
  int64_t slots = 0;   // M; 0: the method merges nothing
  double lambda = 1;   // the compensation λ of attention over the merged slots (quality)
};

// The merged slots' declarations in output order: k_merged, v_merged, w_merged.
std::vector<OutputDecl> merged_slot_outputs(const SelectionParams& s, int64_t slots, DType dtype);

// The merged slots of the evicted tokens of each row given a kept set (kept_idx, kept_len), in
// fp64 (f64 tensors), or (fp32_baseline) as a straightforward fp32 kernel forms them: a running
// fp32 sum over the group in order, divided by the count, rounded to `dtype`. Indices outside
// [0, kv_len) are ignored.
TensorMap merge_evicted(const SelectionParams& s, int64_t slots, const TensorMap& in, const HostTensor& kept_idx,
                        const HostTensor& kept_len, bool fp32_baseline, DType dtype);

// TOL on k_merged and v_merged and EXACT on w_merged against merge_evicted over the impl's kept set.
std::vector<OutputCheck> check_merged_slots(const SelectionParams& s, int64_t slots, DType dtype, const TensorMap& in,
                                            const TensorMap& got);

}  // namespace attnbench::kvcomp
