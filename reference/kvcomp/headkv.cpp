// headkv — head-level budgets: each KV head keeps a capacity allotted from head importance scores
// (retrieval and reasoning heads keep more), chosen within the head by SnapKV's scores. One-shot
// after prefill. Catalog: B-HEADKV. Paper: Fu et al. 2025, Not All Heads Matter: A Head-Level KV
// Cache Compression Method with Integrated Retrieval and Reasoning. Cross-checked against the
// authors' ReasonSnapKVCluster (headkv/snapkv_utils.py).
//
// Semantics (spec_version 1), layer `layer` of n_layers with H = kv_heads heads each, T = kv_len,
// w = obs_window, B = budget (the base capacity per head, the window included), β = beta,
// τ = temp, all in double precision:
//   head scores σ_{l,h} over the L·H heads of the model: Dirichlet(1), σ_i = e_i / Σ e, e_i =
//   −log(1 − u_i) with u_i the i-th fp64 uniform of the case seed's stream "headkv.head_scores"
//   (i = l·H + h) — a stand-in for scores measured on a model, which the harness cannot ship;
//   σ̃ = σ^τ / Σ σ^τ; C' = B − w, u = ⌊C'/β⌋, pool P = u·L·H, floor m = C' − u;
//   head h of this layer keeps c_h = round(σ̃_{layer,h}·P + m) prefix tokens (round: half to even,
//   as torch.round) plus the window: row (b, h) keeps min(c_h + w, T), the same for every sequence;
//   when C' > T − w no head is compressed (every row keeps T), as the authors' code does.
//   Within a row, SnapKV: the window forced, the top c_h prefix tokens by the SnapKV scorer
//   (snapkv_scorer.h; defaults window 32, max pooling, kernel 7: the authors').
// In the family's terms: BudgetPolicy::per_row with these capacities (ragged per-head caches).
//
// Differences from the authors' code, and why:
//   - one cache per KV head: the authors compress the repeated K/V of every query head (their
//     models' caches are expanded to query heads); here a KV head's capacity is its own score's,
//     and its SnapKV score is the mean over its group (snapkv's GQA rule).
//   - synthetic Dirichlet head scores, as above; the allocation from them is the authors'.
//   - beta defaults to 1.005, the first of the authors' README sweep; temp to 1 (theirs).
//   - ties go to the smaller index (torch.sort leaves them unspecified); fp32 probabilities.
#include <algorithm>
#include <cmath>

#include "attnbench/detmath.h"
#include "attnbench/error.h"
#include "attnbench/rng.h"
#include "snapkv_scorer.h"

namespace attnbench::kvcomp {
namespace {

class Headkv final : public SnapkvScored {
 public:
  Headkv()
      : SnapkvScored({.name = "headkv",
                      .summary = "per-head capacities from head importance scores, SnapKV scoring within each head",
                      .catalog_id = "B-HEADKV",
                      .paper = "Fu et al. 2025, Not All Heads Matter: A Head-Level KV Cache Compression Method with Integrated Retrieval and Reasoning",
                      .spec_version = 1},
                     ScoreScope::per_kv_head, BudgetPolicy::per_row) {
    add_window(32);
    add_budget("base capacity per KV head averaged over the model's heads, the observation window included");
    add_layer(1);
    schema_.add({"beta", ParamType::Float, Value(1.005), {}, 1.0, 1e6, {},
                 "the shared pool's size: budget/beta of each head's capacity is pooled"});
    schema_.add({"temp", ParamType::Float, Value(1.0), {}, 1e-3, 1e3, {}, "temperature of the head scores"});
    add_pooling("max", 7);
    add_n_future();
    add_ties();
  }

 protected:

  // Row (b, h) keeps min(c_h + w, T) (the header's allocation), the same for every sequence.
  std::vector<int64_t> row_budgets(const Case& c) const override {
    const int64_t H = c.i64("kv_heads"), L = c.i64("n_layers"), T = c.i64("kv_len"), w = c.i64("obs_window");
    const int64_t base = c.i64("budget") - w;
    std::vector<int64_t> kept(c.i64("batch") * H, T);
    if (base > T - w) return kept;
    const PhiloxStream u(c.seed, "headkv.head_scores", kDomainInputs);
    std::vector<double> sigma(L * H);
    double sum = 0;
    for (int64_t i = 0; i < L * H; ++i) sum += sigma[i] = -detmath::log(1.0 - u.uniform_f64(i));
    double tempered = 0;
    for (double& x : sigma) tempered += x = std::pow(x / sum, c.f64("temp"));
    const double unit = std::floor(static_cast<double>(base) / c.f64("beta"));
    const double pool = unit * static_cast<double>(L * H), floor_tokens = static_cast<double>(base) - unit;
    for (int64_t r = 0; r < static_cast<int64_t>(kept.size()); ++r) {
      const double share = sigma[c.i64("layer") * H + r % H] / tempered;
      kept[r] = std::min<int64_t>(T, static_cast<int64_t>(std::nearbyint(share * pool + floor_tokens)) + w);
    }
    return kept;
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Headkv);
