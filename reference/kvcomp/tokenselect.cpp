// tokenselect — dynamic token-level selection for a decode step: every query head votes with its
// softmax over the candidates, the votes are summed over the heads, and the step reads the sinks,
// the top-k by vote and a local window, one set for every head of the sequence. Selection-only:
// the cache stays whole. Catalog: B-TOKENSELECT. Paper: Wu et al. 2025, TokenSelect: Efficient
// Long-Context Inference and Length Extrapolation for LLMs via Dynamic Token-Level KV Cache
// Selection. Cross-checked against the authors' patcher/token_retrieval.py (TokenRetriever).
//
// Semantics (spec_version 1), per sequence b, T = kv_len, the decode query q_h (position T − 1,
// sparse_step.h) of each of its query heads h, s = score_scale (0: 1/√head_dim):
//   candidates  j ∈ [n_init, T − n_local)
//   vote        v_j = Σ_h softmax_j(s·q_h·k_{g(h),j}), each softmax over the candidates alone
//   pooling     with pool_kernel > 1: the max of v over j ± (pool_kernel − 1)/2 within the
//               candidates (torch's max_pool1d with same padding)
//   set         [0, n_init) ∪ top (budget − n_init − n_local) candidates by v (the tie rule: larger
//               vote, then smaller index) ∪ [T − n_local, T), ascending, the same for every KV head;
//               every token when budget ≥ T (the authors fall back to full attention when
//               n_init + top_k + n_local ≥ T)
//   step        O = attention of q over the set (gather_decode's stage), scale 1/√head_dim
// In the family's terms: the SnapKV scorer (snapkv_scorer.h) with a window of one query, the
// softmax over the candidates (candidate_softmax), max pooling, ScoreScope::per_sequence, sinks
// n_init and recent n_local forced, a uniform budget; selection_only() (sparse_step.h).
//
// Differences from the authors' code, and why:
//   - the budget counts every token the step reads (n_init + top_k + n_local), the family's
//     compression-point convention; the authors' TOP_K is budget − n_init − n_local.
//   - the vote is averaged over the heads, not summed: the same ranking, and the family's scorer.
//   - score_scale defaults to 1/√head_dim. The authors' kernel takes raw dot products (scale 1) in
//     bf16; on G-KV's caches the raw logits span hundreds, the per-head softmax underflows fp32 for
//     all but a few keys, and the top-k among the zeros is a tie no reference can rank. score_scale=1
//     gives the authors' vote where the logits allow it.
//   - query head h reads KV head h / (q_heads / kv_heads), the layout of the model's own repeat_kv;
//     the authors' Triton kernel indexes h mod kv_heads, which differs from their model's grouping
//     whenever kv_heads < q_heads.
//   - fp32 scores (the authors': bf16), ties to the smaller index (torch.topk leaves them open).
//   - selection cache (selection_cache, the authors' QUERY_CACHE; selection_cache.h): the cosine of
//     the sequence's decode query, flattened over its heads, with the cached query decides; on a hit
//     the cached top-k and the current sinks and local window. The authors' fingerprint is the same
//     flattened query (the mean over a step's queries: one query here); their threshold 0.9 per
//     layer is cache_threshold. One step per case: the cached query and its top-k are planted
//     (cache_similarity sets the cosine), so cases choose a hit, a miss or the threshold's edge.
//
// Inputs: the family's G-KV cache (its 32-query window, of which the last query is the step's
// q), k, v, q_future; with selection_cache q_cached and topk_cached. Outputs (sparse_step.h):
// kept_idx SET with the scorer's tie band, kept_len, O TOL over the impl's own set; with
// selection_cache cache_hit (SEMI near the threshold) and the set checked by the impl's decision.
#include "attnbench/error.h"
#include "snapkv_scorer.h"

namespace attnbench::kvcomp {
namespace {

class Tokenselect final : public SnapkvScored {
 public:
  Tokenselect()
      : SnapkvScored({.name = "tokenselect",
                      .summary = "per-head soft votes over the candidates, top-k plus sinks and a local window; a decode step over that set",
                      .catalog_id = "B-TOKENSELECT",
                      .paper = "Wu et al. 2025, TokenSelect: Efficient Long-Context Inference and Length Extrapolation for LLMs via Dynamic Token-Level KV Cache Selection",
                      .spec_version = 1},
                     ScoreScope::per_sequence) {
    add_budget("tokens one decode step reads per KV head: n_init + top_k + n_local");
    schema_.add({"n_init", ParamType::Int, Value(int64_t{1}), {}, 0.0, 1e6, {}, "initial tokens always read (the authors' N_INIT)"});
    schema_.add({"n_local", ParamType::Int, Value(int64_t{16}), {}, 0.0, 1e6, {}, "last tokens always read (the authors' N_LOCAL)"});
    schema_.add({"pool_kernel", ParamType::Int, Value(int64_t{1}), {}, 1.0, 1023.0, {},
                 "max pooling of the votes along the keys (odd, same padding; 1: none, the authors' default)"});
    schema_.add({"score_scale", ParamType::Float, Value(0.0), {}, 0.0, 1e3, {},
                 "logit scale inside each head's softmax; 0: 1/sqrt(head_dim) (the authors' raw dot products: 1)"});
    schema_.add({"selection_cache", ParamType::Bool, Value(false), {}, {}, {}, {},
                 "reuse the cached top-k while the query's cosine to the cached query stays >= cache_threshold (the authors' QUERY_CACHE)"});
    schema_.add({"cache_threshold", ParamType::Float, Value(0.9), {}, -1.0, 1.0, {}, "the cosine at and above which the cached selection is reused"});
    schema_.add({"cache_similarity", ParamType::Float, Value(0.95), {}, -1.0, 1.0, {},
                 "the planted cosine between the step's query and the cached selection's query"});
    add_n_future();
    add_ties();
    schema_.rule("selection_cache: budget < kv_len", [](const Params& p, const std::string&) -> std::string {
      if (!p.flag("selection_cache") || p.i64("budget") < p.i64("kv_len")) return {};
      return cat("budget=", p.i64("budget"), " covers kv_len=", p.i64("kv_len"), ": nothing is selected, so there is no selection to cache");
    });
    schema_.rule("n_init + n_local <= budget", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("n_init") + p.i64("n_local") <= p.i64("budget")) return {};
      return cat("budget=", p.i64("budget"), " is smaller than n_init + n_local = ", p.i64("n_init") + p.i64("n_local"),
                 "; the budget counts the tokens always read");
    });
    schema_.rule("pool_kernel is odd", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("pool_kernel") % 2 == 1) return {};
      return cat("pool_kernel=", p.i64("pool_kernel"), " is even; same padding needs an odd kernel");
    });
  }

  bool selection_only() const override { return true; }

  SelectionCacheRule selection_cache(const Case& c) const override {
    return {c.flag("selection_cache"), c.f64("cache_threshold"), c.f64("cache_similarity")};
  }

  SnapkvParams scorer(const Case& c) const override {
    SnapkvParams m = last_query_scorer(c);
    m.pool_radius = static_cast<int32_t>((c.i64("pool_kernel") - 1) / 2);
    m.pool_mode = pool_max;
    if (c.f64("score_scale") > 0) m.scale = static_cast<float>(c.f64("score_scale"));
    m.candidate_softmax = 1;
    return m;
  }

 protected:
  Keep keep(const Case& c) const override { return {c.i64("n_init"), c.i64("n_local")}; }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Tokenselect);
