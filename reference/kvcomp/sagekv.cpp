// sagekv — self-attention-guided eviction: after prefill each KV head keeps its sinks, the middle
// tokens its group's last-token query attends to most, the recent window and the last token.
// Catalog: B-SAGEKV. Paper: Wang et al. 2025, LLMs Know What to Drop: Self-Attention Guided KV
// Cache Eviction for Efficient Long-Context Inference (arXiv 2503.08879). No code is published:
// the paper's text settles the semantics, and every open point is a choice recorded here.
//
// Semantics (spec_version 1), per sequence b and KV head g, with T = kv_len, S = n_sink,
// W = n_recent, s = 1/√head_dim:
//   forced: sinks [0, S), the recent window [T − W − 1, T − 1) and the last token T − 1;
//   candidates: the middle [S, T − W − 1), scored by
//     score_j = (1/G)·Σ_{h of g} softmax_j(s·q_{h,T−1}·k_{g,j}),
//   the last prompt token's attention over all T keys, averaged over the group's query heads
//   (the paper scores per head; with GQA this takes the mean of the probabilities, the harness's
//   convention for every grouped scorer); keep the top budget − S − W − 1 per KV head by the tie
//   rule (larger score, then smaller index); everything when budget ≥ T or S + W + 1 ≥ T.
// In the family's terms: the SnapKV scorer (snapkv_scorer.h) with a window of one query and no
// pooling, sinks S and recent W + 1 forced, a uniform budget per KV head.
// Choices: defaults n_sink 4 (StreamingLLM's, which the paper builds on) and n_recent 64; the
// budget counts every kept token. The paper's decode phase (new tokens enter the recent window,
// the oldest leaves) is not here: this is the one-shot step after prefill.
//
// Inputs: the family's G-KV cache with its 32-query window, of which q_obs holds the last query,
// so sagekv compresses the cache its peers do at equal shapes. Outputs: the family's compacted
// cache, kept_idx SET with the scorer's tie band.
#include "attnbench/error.h"
#include "snapkv_scorer.h"

namespace attnbench::kvcomp {
namespace {

class Sagekv final : public SnapkvScored {
 public:
  Sagekv()
      : SnapkvScored({.name = "sagekv",
                      .summary = "sinks, the last token's top-k per KV head, the recent window and the last token",
                      .catalog_id = "B-SAGEKV",
                      .paper = "Wang et al. 2025, LLMs Know What to Drop: Self-Attention Guided KV Cache Eviction",
                      .spec_version = 1}) {
    add_budget("kept tokens per KV head: sinks, chosen, recent and the last token");
    schema_.add({"n_sink", ParamType::Int, Value(int64_t{4}), {}, 0.0, 1e6, {}, "attention sinks always kept"});
    schema_.add({"n_recent", ParamType::Int, Value(int64_t{64}), {}, 0.0, 1e6, {},
                 "recent tokens always kept, before the last token"});
    add_n_future();
    add_ties();
    schema_.rule("n_sink + n_recent + 1 <= budget", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("n_sink") + p.i64("n_recent") + 1 <= p.i64("budget")) return {};
      return cat("budget=", p.i64("budget"), " is smaller than n_sink + n_recent + 1 = ",
                 p.i64("n_sink") + p.i64("n_recent") + 1, ", the tokens always kept");
    });
  }

  SnapkvParams scorer(const Case& c) const override { return last_query_scorer(c); }

 protected:
  Keep keep(const Case& c) const override { return {c.i64("n_sink"), c.i64("n_recent") + 1}; }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Sagekv);
