// The KV family's per-step eviction, phase `decode` of a scored-selection method that evicts as it
// generates (h2o, tova): one new token arrives, the step attends over the cache and the new token,
// updates the scores and evicts one token per row, so the cache stays at its budget. The prefill
// phase (scored_selection.h) compresses the prompt once; this is what the method does afterwards,
// at every generated token. Kernel-side semantics: eviction_step_common.h.
//
//   schema        the method's own (phase decode adds the rules kv_len >= 32, budget < kv_len:
//                 a full cache of budget earlier tokens)
//   inputs        q [batch, q_heads, 1, head_dim]: the new token's query; k, v [batch, kv_heads,
//                 budget + 1, head_dim]: the cache's slots, in any order, and the new token
//                 appended in the last slot (a real engine appends before it attends); pos
//                 [batch, kv_heads, budget + 1] i32: each slot's position; with accumulate, acc
//                 [batch, kv_heads, budget] f32: the method's accumulated scores of the cache slots
//   outputs       out [batch, q_heads, 1, head_dim] (the step's attention output, case dtype,
//                 TOL); scores [batch, kv_heads, budget + 1] f32 (TOL): each slot's score after
//                 the step (H2O: acc plus this step's attention; TOVA: this step's attention);
//                 evicted [batch, kv_heads] i32 (SET): the slot whose token leaves. The caller
//                 moves the last slot into it (one token's K, V, position and score: not timed)
//   checks        out and scores TOL against fp64 (baseline: the straightforward fp32 step, its
//                 probabilities recomputed from the fp32 log-sum-exp, exp(logit − lse), as the
//                 kernels do from the decode's and FlashAttention's backward pass does from its
//                 forward's: that one rounding of lse is the scores' largest error);
//                 evicted SET: the kept slots are the reference's except exchanges within the tie
//                 band of the eviction threshold, and the evicted slot must be a candidate
//   work          one decode step over budget + 1 tokens plus the scores: read-bound
//   companions    gqa decode over budget + 1 tokens (the step without eviction) and over kv_len
//
// Where the state comes from. A benchmark cannot run a thousand earlier steps to reach a cache, so
// the inputs plant one the method could hold: the family's G-KV cache of kv_len tokens (gkv.h,
// the query at kv_len − 1 the new token's), the previous step's forced tokens (the last `recent`
// positions before the new token) and the best budget − recent of the earlier positions by a state
// score: the attention the 8 window queries before the new token paid each key, averaged over the
// score row's heads and summed over the queries (what H2O accumulates, over fewer queries); acc is
// that score at each slot. The slots are shuffled by the seed (a real cache's order after many
// evictions), so no kernel can assume them sorted.
#pragma once

#include <vector>

#include "attnbench/method.h"
#include "eviction_step_common.h"
#include "gkv.h"

namespace attnbench::kvcomp {

// What a method's decode step is, beyond the case's shapes.
struct StepRule {
  int64_t recent = 1;         // positions >= kv_len − recent are never evicted (the new token too)
  bool accumulate = false;    // scores accumulate over the steps (H2O) or are this step's (TOVA)
  bool visible_mean = false;  // rank by score / (queries that saw the token), kvpress's mean_visible
};

struct StepSpec {
  StepParams s;
  GkvConfig gkv;  // the cache the state is planted in (kv_len tokens, the window's last query the new token's)
};

// Phase decode's rules, added to a method's schema (kv_len >= 32, budget < kv_len).
void add_step_rules(ParamSchema& schema);

std::vector<OutputDecl> step_outputs(const StepSpec& spec, DType dtype);
TensorMap step_inputs(const StepSpec& spec, DType dtype, uint64_t seed);
Reference step_reference(const StepSpec& spec, DType dtype, const TensorMap& in);
CheckReport step_check(const StepSpec& spec, DType dtype, const TensorMap& in, const Reference& ref, const TensorMap& got);
Work step_work(const StepSpec& spec, DType dtype);
Json step_quality(const StepSpec& spec);
std::vector<RelatedCase> step_companions(const StepSpec& spec, DType dtype);

// The step's attention as a case of gqa decode (budget + 1 keys, one query per head), which every
// backend's step impl runs through that backend's own gqa impl: the decode kernels are not copied.
Case step_attention_case(const Case& c);

}  // namespace attnbench::kvcomp
