// duoattention — retrieval and streaming heads: the heads with the lowest gate scores over the
// whole model become streaming heads, which keep only attention sinks and a recent window; the
// others (retrieval heads) keep every token. One-shot after prefill, positions only once the
// heads are chosen. Catalog: B-DUOATTN. Paper: Xiao et al. 2025, DuoAttention: Efficient
// Long-Context LLM Inference with Retrieval and Streaming Heads. Cross-checked against kvpress's
// DuoAttentionPress (kvpress/presses/duo_attention_press.py).
//
// Semantics (spec_version 1), layer `layer` of L = n_layers with H = kv_heads heads each,
// T = kv_len, S = sink, R = recent, B = budget, all in double precision:
//   gate scores α_i, i = l·H + h over the model's L·H KV heads: the i-th fp64 uniform of the case
//   seed's stream "duoattention.gate_scores" (in [0, 1): kvpress's clip to [0, 1] changes none);
//   the fraction of streaming heads ρ = clamp((T − B)/(T − S − R), 0, 1), so that the model's heads
//   keep B tokens each on average; n = round(L·H·ρ) (half to even, as Python's round);
//   the streaming heads are the n lowest α (ties: the smaller i, which numpy's default sort leaves
//   unspecified), as kvpress's np.argsort(head_scores, axis=None)[:n_pruned];
//   row (b, h) keeps [0, S) ∪ [T − R, T) when head (layer, h) streams, else [0, T) — the same in
//   every sequence; when T ≤ S + R nothing is evicted (kvpress masks the empty slice S:−R).
//   Rules: S + R ≤ B (the budget counts the streaming heads' forced tokens), R ≥ 1 (kvpress's
//   slice S:−R with R = 0 masks nothing), layer < n_layers.
// kvpress's achieved compression is (n / (L·H))·(1 − (S + R)/T) over the model; here each layer's
// case is one layer of it, and the model's layers together achieve exactly that (the test).
// In the family's terms (scored_selection.h): BudgetPolicy::per_row, forced {S, R}, row budgets
// S + R (streaming) or T (retrieval): every row keeps none or all of its candidates, so nothing is
// ranked (scored() false, scores_needed(c) false: no impl scores) and the checks are EXACT.
//
// Differences from kvpress, and why:
//   - the budget B in place of head_compression_ratio, so that rows sit at the family's
//     compression points (kvpress's 1 / (1 − ratio) = T / B, on the leaderboard beside the other
//     methods): ρ = (T − B)/(T − S − R) is kvpress's head_compression_ratio at T.
//   - synthetic uniform gate scores, as above: the learned gates (the authors' attn_patterns) are
//     a model's, which the harness cannot ship. Their order is all that matters.
//   - kvpress keeps the whole cache and masks the streaming heads' middle tokens at attention time
//     (attention_patch.py); here the streaming heads' caches are compacted to their S + R tokens:
//     ragged per-head caches, the memory DuoAttention's paper saves. The kept sets are kvpress's
//     unmasked keys.
//   - defaults: S = 128, R = 256 (the authors' config, as kvpress loads it); B = 512 (at the
//     default kv_len 2048, a 4x point; kvpress's default ratio 0 streams nothing).
//   - one gate per KV head, as kvpress's streaming_mask [layers, kv_heads] and the authors'
//     patterns: a KV head's cache is compacted or kept whole for its whole group.
//
// Inputs (G-KV, gkv.h; case dtype): k, v [batch, kv_heads, kv_len, head_dim], and q_future
// [batch, q_heads, n_future, head_dim], held-out later queries used only by quality(); the
// family's default cache (a 32-query window, its queries dropped), so at equal shapes duoattention
// compresses the cache snapkv and streaming_llm do.
//
// Outputs, rows (b, g), capacity the most any row of this layer keeps:
//   kept_idx [batch, kv_heads, capacity]            i32   EXACT, length kept_len, pad −1, ascending
//   kept_len [batch, kv_heads]                      i32   EXACT: S + R or T per head (T if T ≤ S + R)
//   k_kept   [batch, kv_heads, capacity, head_dim]  dtype EXACT: k gathered at the impl's own
//   v_kept   [batch, kv_heads, capacity, head_dim]  dtype        kept_idx, bit for bit; 0 beyond
#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/error.h"
#include "attnbench/rng.h"
#include "scored_selection.h"

namespace attnbench::kvcomp {
namespace {

class Duoattention final : public ScoredSelection {
 public:
  Duoattention()
      : ScoredSelection({.name = "duoattention",
                         .summary = "retrieval and streaming heads: the lowest-gated heads keep sinks and a recent window, the rest every token",
                         .catalog_id = "B-DUOATTN",
                         .paper = "Xiao et al. 2025, DuoAttention: Efficient Long-Context LLM Inference with Retrieval and Streaming Heads",
                         .spec_version = 1},
                        ScoreScope::per_kv_head, BudgetPolicy::per_row) {
    schema_.add({"budget", ParamType::Int, Value(int64_t{512}), {}, 1.0, 1e7, {},
                 "kept tokens per KV head averaged over the model's heads: sets the fraction of streaming heads"});
    schema_.add({"sink", ParamType::Int, Value(int64_t{128}), {}, 0.0, 1e6, {},
                 "attention sinks a streaming head keeps: the first tokens"});
    schema_.add({"recent", ParamType::Int, Value(int64_t{256}), {}, 1.0, 1e6, {},
                 "recent tokens a streaming head keeps: the last ones"});
    add_layer(1);
    add_n_future();
    schema_.rule("sink + recent <= budget", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("sink") + p.i64("recent") <= p.i64("budget")) return {};
      return cat("budget=", p.i64("budget"), " is smaller than sink + recent = ", p.i64("sink") + p.i64("recent"),
                 "; a streaming head keeps its sinks and recent window, so the mean over the heads cannot be lower");
    });
  }

 protected:
  Keep keep(const Case& c) const override { return {c.i64("sink"), c.i64("recent")}; }
  bool scored() const override { return false; }

  // Row (b, h) keeps S + R when head (layer, h) streams, else T; T everywhere when T ≤ S + R.
  std::vector<int64_t> row_budgets(const Case& c) const override {
    const int64_t H = c.i64("kv_heads"), L = c.i64("n_layers"), T = c.i64("kv_len");
    const int64_t forced = c.i64("sink") + c.i64("recent"), layer = c.i64("layer");
    std::vector<int64_t> kept(c.i64("batch") * H, T);
    if (T <= forced) return kept;
    // ρ·L·H in one division of exact integers, so a tie at .5 is exact and rounds to even.
    const double want = static_cast<double>(L * H * std::clamp<int64_t>(T - c.i64("budget"), 0, T - forced)) /
                        static_cast<double>(T - forced);
    const auto n = static_cast<int64_t>(std::nearbyint(want));
    const PhiloxStream u(c.seed, "duoattention.gate_scores", kDomainInputs);
    std::vector<double> gate(L * H);
    for (int64_t i = 0; i < L * H; ++i) gate[i] = u.uniform_f64(static_cast<uint64_t>(i));
    std::vector<int64_t> order(L * H);
    std::iota(order.begin(), order.end(), int64_t{0});
    const auto lower = [&](int64_t a, int64_t b) { return gate[a] != gate[b] ? gate[a] < gate[b] : a < b; };
    std::nth_element(order.begin(), order.begin() + n, order.end(), lower);  // the n lowest first
    for (int64_t i = 0; i < n; ++i)
      if (order[i] / H == layer)
        for (int64_t b = 0; b < c.i64("batch"); ++b) kept[b * H + order[i] % H] = forced;
    return kept;
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Duoattention);
