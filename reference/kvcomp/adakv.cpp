// adakv — adaptive head-wise budgets: every KV head keeps a safeguard of its own best tokens, and
// the rest of the sequence's budget goes to its best-scored tokens across all its KV heads, so a
// head whose attention is concentrated gives tokens to one whose attention is spread. One-shot
// after prefill, ragged per-head caches. Catalog: B-ADAKV. Paper: Feng et al. 2024, Ada-KV:
// Optimizing KV Cache Eviction by Adaptive Budget Allocation for Efficient LLM Inference.
// Cross-checked against kvpress's AdaKVPress wrapping SnapKVPress.
//
// Semantics (spec_version 1), per sequence b with H = kv_heads, T = kv_len, w = obs_window,
// B = budget (kept tokens per KV head on average, the window included), α = alpha:
//   scores: the SnapKV scorer (snapkv_scorer.h) per KV head over the prefix [0, T − w);
//   every head keeps its window and its best f = max(0, ⌊α·B⌋ − w) prefix tokens (capped at
//   k = B − w); of the sequence's remaining prefix tokens, its best H·(k − f) across all heads
//   (larger score, then smaller g·T + j) are kept too; row (b, g) keeps its window, its floor and
//   its share of those, ascending. Everything is kept when B ≥ T.
// In the family's terms: BudgetPolicy::head_floor with floor_candidates = f.
//
// Differences from kvpress, and why:
//   - kvpress's safeguard n_safe = int(α·n_kept) counts the window (which its SnapKV scores put
//     first), so the floor of prefix tokens is n_safe − w, as here.
//   - kvpress masks the evicted keys in a full-size cache; here the kept tokens are compacted into
//     ragged per-head rows (kept_len per row), which is the memory the method saves.
//   - the budget is a token count (kvpress: n_kept = int(T·(1 − ratio)) per head on average);
//     defaults window 32, max pooling with kernel 7 (snapkv's here; kvpress's SnapKV: 64, avg, 5);
//     ties go to the smaller (g, j) (torch.topk leaves them unspecified); fp32 probabilities.
#include "attnbench/error.h"
#include "snapkv_scorer.h"

#include <algorithm>
#include <cmath>

namespace attnbench::kvcomp {
namespace {

class Adakv final : public SnapkvScored {
 public:
  Adakv()
      : SnapkvScored({.name = "adakv",
                      .summary = "a floor per KV head, the rest of the budget to the best tokens across heads",
                      .catalog_id = "B-ADAKV",
                      .paper = "Feng et al. 2024, Ada-KV: Optimizing KV Cache Eviction by Adaptive Budget Allocation",
                      .spec_version = 1},
                     ScoreScope::per_kv_head, BudgetPolicy::head_floor) {
    add_window(32);
    add_budget("kept tokens per KV head on average, the observation window included");
    schema_.add({"alpha", ParamType::Float, Value(0.2), {}, 0.0, 1.0, {},
                 "safeguard: each head keeps at least its best alpha·budget tokens (its window counted)"});
    add_pooling("max", 7);
    add_n_future();
    add_ties();
  }

 protected:
  int64_t floor_candidates(const Case& c) const override {
    const auto safe = static_cast<int64_t>(std::floor(c.f64("alpha") * static_cast<double>(c.i64("budget"))));
    return std::max<int64_t>(0, safe - c.i64("obs_window"));
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Adakv);
