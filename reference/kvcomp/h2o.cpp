// h2o — heavy-hitter oracle: keep the tokens that received the most attention from all of the
// prompt's queries (causal column sums) plus a recent window. One-shot after prefill. Catalog:
// B-H2O. Paper: Zhang et al. 2023, H2O: Heavy-Hitter Oracle for Efficient Generative Inference of
// Large Language Models. Cross-checked against kvpress's ObservedAttentionPress (whose
// normalisation is the `mean_visible` option) and the authors' heavy-hitter mask.
//
// Semantics (spec_version 1), per sequence b and KV head g, with T = kv_len, s = 1/√head_dim,
// R = ⌊budget · recent_share⌋:
//   A_{h,j} = Σ_{i ≥ j} softmax_j(s·q_{h,i}·k_{g,j}) over the T prompt queries (query i sees keys
//   j ≤ i); norm `sum`: score_j = A_{h,j} (divided by T, which ranks alike); norm `mean_visible`:
//   A_{h,j} / (T − j), the mean over the queries that could attend to j (kvpress);
//   score_{g,j} = the mean over the group's query heads; the last R tokens forced (the recent
//   window), the top budget − R of the rest by the tie rule; everything when budget ≥ T.
// In the family's terms: the SnapKV scorer (snapkv_scorer.h) with a window of every prompt query,
// no pooling, recent = R forced, a uniform budget per KV head.
//
// Differences from the references, and why:
//   - kvpress scores with mean_visible and keeps the top n_kept with no recent window; here the
//     window is a parameter (recent_share 0.5 is H2O's half heavy, half recent; 0 is kvpress's).
//   - the budget is kept tokens per KV head (kvpress: int(T·(1 − ratio))); the authors set heavy
//     and recent budgets as fractions of the sequence.
//   - GQA: the mean over the group's heads (kvpress: the mean too; the authors' models are MHA).
//   - ties go to the smaller index; probabilities are accumulated in fp32 (kvpress: eager
//     attention in the model dtype).
//
// Phase decode (eviction_step.h), one generated token: the step's attention over the budget's
// slots and the new token; score_i = acc_i + (the group's mean probability of slot i), the new
// token's its own; the non-recent slot (position < kv_len − R) with the smallest score evicted
// (norm mean_visible: the smallest score / (kv_len − position), the queries that saw it), ties to
// the newer token. Differences from the authors' heavy-hitter cache (h2o_hf), and why:
//   - the authors add each step's probabilities to every head's running sum and keep the top
//     heavy budget of the non-recent tokens at every step, which with one new token is this one
//     eviction; GQA takes the group's mean, as the prefill does.
//   - the new token is never evicted, even with recent_share 0 (R is at least 1): its score is
//     one step's attention, not comparable with the others' sums, and a cache that drops the
//     token it just appended has not generated it.
//   - the state (acc, the cache's tokens) is planted from G-KV (eviction_step.h), not carried from
//     earlier steps, so each case is one step of a method already at its budget.
//
// Inputs: the family's G-KV cache with its 32-query window, and q_prompt, the queries of the
// prompt's earlier positions from the same model (gkv.h), so the cache is the one every other
// KV method compresses at equal shapes; q_obs is [batch, q_heads, kv_len, head_dim], every prompt
// query. The column sums are O(T²·d) per head, like prefill attention: the fp64 reference takes
// about 1.4 GFLOP/s, so model-sized prompts belong in kv.json, not the CI suites.
#include <algorithm>
#include <cmath>

#include "attnbench/error.h"
#include "snapkv_scorer.h"

namespace attnbench::kvcomp {
namespace {

class H2o final : public SnapkvScored {
 public:
  H2o()
      : SnapkvScored({.name = "h2o",
                      .summary = "heavy hitters: the most attended tokens over all prompt queries, plus a recent window",
                      .catalog_id = "B-H2O",
                      .paper = "Zhang et al. 2023, H2O: Heavy-Hitter Oracle for Efficient Generative Inference of Large Language Models",
                      .spec_version = 1}) {
    add_budget("kept tokens per KV head, the recent window included");
    schema_.add({"recent_share", ParamType::Float, Value(0.5), {}, 0.0, 1.0, {},
                 "the recent window's share of the budget (H2O: half; kvpress: none)"});
    schema_.add({"norm", ParamType::String, Value(std::string("sum")), {}, {}, {}, {"sum", "mean_visible"},
                 "column sums as they are, or each divided by the queries that see the key (kvpress)"});
    add_n_future();
    add_ties();
    add_decode_step();
  }

  SnapkvParams scorer(const Case& c) const override { return prompt_scorer(c, c.str("norm") == "mean_visible"); }
  bool scores_every_prompt_query() const override { return true; }

 protected:
  Keep keep(const Case& c) const override {
    return {0, static_cast<int64_t>(std::floor(static_cast<double>(c.i64("budget")) * c.f64("recent_share")))};
  }

  // The step: the recent window (the new token in it) never evicted; the scores accumulate.
  StepRule step_rule(const Case& c) const override {
    return {keep(c).recent, true, c.str("norm") == "mean_visible"};
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::H2o);
