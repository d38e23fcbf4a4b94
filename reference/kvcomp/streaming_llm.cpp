// streaming_llm — attention sinks plus a recent window: one-shot KV-cache compression after
// prefill that looks at positions only. Catalog: B-STREAMINGLLM. Paper: Xiao et al.
// 2024, Efficient Streaming Language Models with Attention Sinks. Cross-checked against kvpress's
// StreamingLLMPress.
//
// Semantics (spec_version 1), per sequence b and KV head g, with T = kv_len, n = min(budget, T),
// S = n_sink:
//   kept = [0, S) ∪ [T − (n − S), T)   when budget < T (the sinks, then the last n − S tokens);
//   kept = [0, T)                      when budget ≥ T (nothing to evict).
//   budget counts every kept token, the sinks included: n_sink ≤ budget is a schema rule. The set
//   is the same for every head and every sequence; kept indices ascending.
// kvpress keeps n_kept = int(T·(1 − ratio)) tokens (in floating point, truncated) and prunes the
// n_pruned = T − n_kept right after the sinks, which is this set with budget = n_kept. That is not
// ⌊T·ratio⌋ pruned: at T = 777, ratio 0.875 kvpress prunes 680, not 679. Kept keys keep their original positions (no re-rotation).
// In the family's terms (scored_selection.h): sinks = n_sink and recent = budget − n_sink forced,
// no candidates to rank, so the checks are EXACT.
//
// Inputs (G-KV, gkv.h; case dtype): k, v [batch, kv_heads, kv_len, head_dim], and q_future
// [batch, q_heads, n_future, head_dim], held-out later queries used only by quality(). G-KV is
// generated with snapkv's default 32-query window (the family's default; its queries dropped:
// nothing here reads them), so at equal shapes streaming_llm and snapkv with obs_window=32
// compress the same cache and are judged on the same future queries.
//
// Outputs, rows (b, g), capacity `budget`, every row's length n:
//   kept_idx [batch, kv_heads, budget]            i32   EXACT, length kept_len, pad −1, ascending
//   kept_len [batch, kv_heads]                    i32   EXACT
//   k_kept   [batch, kv_heads, budget, head_dim]  dtype EXACT: k gathered at the impl's own
//   v_kept   [batch, kv_heads, budget, head_dim]  dtype        kept_idx, bit for bit; 0 beyond n
#include "attnbench/error.h"
#include "scored_selection.h"

namespace attnbench::kvcomp {
namespace {

class StreamingLlm final : public ScoredSelection {
 public:
  StreamingLlm()
      : ScoredSelection({.name = "streaming_llm",
                         .summary = "attention sinks plus a recent window: keep the first n_sink tokens and the last budget − n_sink",
                         .catalog_id = "B-STREAMINGLLM",
                         .paper = "Xiao et al. 2024, Efficient Streaming Language Models with Attention Sinks",
                         .spec_version = 1}) {
    schema_.add({"budget", ParamType::Int, Value(int64_t{256}), {}, 1.0, 1e7, {},
                 "kept tokens per KV head, the sinks included"});
    schema_.add({"n_sink", ParamType::Int, Value(int64_t{4}), {}, 0.0, 1e6, {},
                 "attention sinks: the first tokens, always kept"});
    add_n_future();
    schema_.rule("n_sink <= budget", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("n_sink") <= p.i64("budget")) return {};
      return cat("budget=", p.i64("budget"), " is smaller than n_sink=", p.i64("n_sink"),
                 "; the budget counts the sinks, which are always kept");
    });
  }

 protected:
  Keep keep(const Case& c) const override { return {c.i64("n_sink"), c.i64("budget") - c.i64("n_sink")}; }
  bool scored() const override { return false; }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::StreamingLlm);
