// The SnapKV scorer: how every method that ranks the prompt's keys by the attention of its last
// queries scores them. snapkv is the scorer with a uniform budget; pyramidkv changes the budget per
// layer, headkv per head, adakv chooses across heads; tova and sagekv score with a window of one
// query, the last prompt token's; h2o with every prompt query (the causal column sums). The
// backends share it too: one scoring kernel per backend (impls/<backend>/kvcomp/snapkv_scorer*),
// registered under each of these methods.
//
// Semantics (every method's spec_version counts changes here), per score row r — a (sequence b,
// KV head g) pair, or the sequence b alone under ScoreScope::per_sequence — with T = kv_len,
// w = obs_window, s = 1/√head_dim, S = the forced sinks and C = the candidates [S, S + C):
//   1. Window scores. Window query i ∈ [0, w) of head h sits at position T − w + i and sees keys
//      j ≤ T − w + i (causal, bottom-right aligned). P_{h,i,j} = softmax_j(s·q_{h,i}·k_{g(h),j})
//      over ALL its visible keys; a_{h,j} = (1/n_j)·Σ_i P_{h,i,j} for the candidates, n_j = w, or
//      with visible_mean the window queries that see j, min(w, T − j) (equal to w for every
//      candidate whose method forces at least the window's last w − 1 tokens).
//   2. Pooling along the candidates (PoolMode, kernel 2ρ + 1, same padding): the max or the mean of
//      the in-range elements (padding ignored), or their sum / kernel (pool_avg_padded: padding
//      counted as zeros, which is what torch's avg_pool1d, and so kvpress, computes).
//   3. score_{r,j} = the mean of pooled_{h,j} over the score row's heads: the G query heads of g
//      (query heads g·G .. g·G + G − 1 of b), or all q_heads of b.
//
// Inputs (G-KV, gkv.h; case dtype): q_obs [batch, q_heads, w, head_dim] — the last w of the
// generator's window, which is the method's obs_window if it has one (snapkv's convention), else
// the family's 32-query window, so a one-query scorer compresses the same cache as knorm and
// streaming_llm at equal shapes (h2o: every prompt query, the window's last) — k, v [batch,
// kv_heads, kv_len, head_dim], q_future (quality).
//
// SET tie band (docs/methodology.md "SET, SEMI and STAT"), per score row with n heads:
//   tie_c = 1.02·(2(d+3)·Λ + T + w + kernel + n + 8),  Λ = s·max_{h, i}‖q_{h,i}‖·max_j‖k_j‖
// over the row's heads and their KV heads' keys: the relative error bound of an fp32 score (fp32
// dot products and softmax, fp32 P, the pooling and the head mean) times two.
#pragma once

#include "scored_selection.h"
#include "snapkv_common.h"

namespace attnbench::kvcomp {

class SnapkvScored : public ScoredSelection {
 public:
  // The scorer's parameters of a case (snapkv_params() of snapkv_common.h asks this). Default: a
  // method with a window (add_window(), add_pooling()), as snapkv, pyramidkv, headkv and adakv.
  virtual SnapkvParams scorer(const Case& c) const { return window_scorer(c); }

 protected:
  using ScoredSelection::ScoredSelection;

  // Schema helpers, in the order a method adds them: the window, the budget (after a window, with
  // the rule that it covers the window), the layer (the family's add_layer()), pooling, G-KV's
  // planted ties.
  void add_window(int64_t default_window);
  void add_budget(const std::string& doc);
  void add_pooling(const std::string& default_pool, int64_t default_kernel);
  void add_ties();
  // scorer() of a method with the parameters above.
  SnapkvParams window_scorer(const Case& c) const;
  // scorer() of a one-query method: the last prompt token's attention, unpooled.
  static SnapkvParams last_query_scorer(const Case& c);
  // scorer() of a method that reads every prompt query (H2O's column sums), unpooled: divided by
  // kv_len, or with visible_mean by the queries that see each key.
  static SnapkvParams prompt_scorer(const Case& c, bool visible_mean);

  // Whether the scorer reads every prompt query (a prompt_scorer() method: h2o, zeromerge). Then
  // G-KV also generates the earlier queries (gkv.h's prompt option) and the prefill inputs join
  // them with the window into q_obs, every prompt query in order, bits unchanged.
  virtual bool scores_every_prompt_query() const { return false; }

  // Default: the window forced, no sinks (snapkv's selection; methods with other forced tokens say so).
  Keep keep(const Case& c) const override { return {0, c.i64("obs_window")}; }
  bool reads_window_queries() const override { return true; }
  TensorMap prefill_inputs(const Case& c) const override;
  GkvConfig gkv(const Case& c) const override;
  void score(const Case& c, const TensorMap& in, int64_t row, double* scores) const override;
  double tie_c(const Case& c, const TensorMap& in, int64_t row) const override;
  Work score_work(const Case& c) const override;
};

}  // namespace attnbench::kvcomp
