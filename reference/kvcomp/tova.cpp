// tova — token omission via attention: keep the tokens the last prompt token attends to most,
// one ranking per sequence shared by its KV heads. One-shot after prefill. Catalog: B-TOVA.
// Paper: Oren et al. 2024, Transformers are Multi-State RNNs. Cross-checked against kvpress's
// TOVAPress and the authors' tova_cache.py.
//
// Semantics (spec_version 1), per sequence b, with T = kv_len, s = 1/√head_dim:
//   score_j = (1/q_heads)·Σ_h softmax_j(s·q_{h,T−1}·k_{g(h),j}) for j < T − 1: the last query's
//   attention over all T keys (itself included), averaged over every query head of the sequence;
//   the last token T − 1 is always kept; keep the top budget − 1 by the tie rule (larger score,
//   then smaller index), the same tokens for every KV head; everything when budget ≥ T.
// In the family's terms: the SnapKV scorer (snapkv_scorer.h) with a window of one query, no
// pooling, ScoreScope::per_sequence; recent = 1 forced; a uniform budget.
//
// Differences from kvpress, and why:
//   - the budget is kept tokens per KV head, the last token included (kvpress: int(T·(1 − ratio)),
//     which also includes it: it pads the last token's score with the maximum plus one).
//   - ties go to the smaller index; probabilities are accumulated in fp32 (kvpress: the query dtype).
//   - the authors' TOVA does not force the last token; kvpress does, and so does this (its own
//     weight is almost always the largest, so the sets rarely differ).
//
// Phase decode (eviction_step.h), one generated token: the step's attention over the budget's
// slots and the new token, averaged over every query head of the sequence; the slot (other than
// the new token) with the smallest mean evicted, the same slot in every KV head (one ranking per
// layer), ties to the newer token. Differences from the authors' tova_cache.py, and why:
//   - the authors may evict the token just appended when its own weight is the smallest; kvpress's
//     convention and this one keep it (forced, as the prefill forces the last token).
//   - no state carries over (TOVA's scores are each step's attention alone); the cache's tokens are
//     planted from G-KV (eviction_step.h).
//
// Inputs: the family's G-KV cache with its 32-query window, of which q_obs holds the last query
// (snapkv_scorer.h), so tova compresses the cache snapkv, knorm and streaming_llm do at equal
// shapes. Outputs: the family's compacted cache, kept_idx SET with the scorer's tie band.
#include "snapkv_scorer.h"

namespace attnbench::kvcomp {
namespace {

class Tova final : public SnapkvScored {
 public:
  Tova()
      : SnapkvScored({.name = "tova",
                      .summary = "the last token's attention averaged over heads: one ranking per sequence",
                      .catalog_id = "B-TOVA",
                      .paper = "Oren et al. 2024, Transformers are Multi-State RNNs",
                      .spec_version = 1},
                     ScoreScope::per_sequence) {
    add_budget("kept tokens per KV head, the last token included");
    add_n_future();
    add_ties();
    add_decode_step();
  }

  SnapkvParams scorer(const Case& c) const override { return last_query_scorer(c); }

 protected:
  Keep keep(const Case&) const override { return {0, 1}; }
  // The step: the new token kept, every other one ranked by this step's attention alone.
  StepRule step_rule(const Case&) const override { return {1, false, false}; }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Tova);
