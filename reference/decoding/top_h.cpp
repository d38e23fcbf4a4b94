// top_h — top-H decoding: the standard chain, then the longest run of the most probable tokens
// whose entropy stays within a share alpha of the top N's.
// Catalog: C-TOPH. Baghaei Potraghloo et al. 2025, Top-H Decoding: Adapting the Creativity and
// Coherence with Bounded Entropy in Text Generation; the authors' TopH_LogitsProcessor
// (github ErfanBaghaei/Top-H-Decoding, logit_processor.py).
//
// Semantics (spec_version 1): the decoding family's sampler contract (sampler.h) with a processor
// of its own after the standard four (HF transformers' order: temperature, top_k, top_p, min_p,
// then top-H): p = softmax of the kept z; the kept tokens in order of z descending (the smaller
// index first on ties), the first N = min(top_n, kept) of them; h = −p ln p per token and the
// budget τ = alpha·Σ_{i≤N} h_i; keep the first m tokens, m the largest in [1, N] with
// Σ_{i≤m} h_i ≤ τ (m = 1 when the top token alone exceeds it); then the race.
// Choices, and where they differ from the code they come from:
//   - The authors' loop stops before the token whose inclusion makes the running entropy exceed
//     the budget: the longest such prefix, as here. At alpha = 1 it never stops and reads past the
//     top N (an index error); here m = N, the clamp.
//   - Their budget is ((H(q) − log2 A)·A − bias)·alpha over the top N's p renormalised (q = p/A,
//     A = Σ p): (H(q) − log2 A)·A is the top N's raw entropy −Σ p log2 p. `bias` is not defined in
//     the published code (a NameError as written); the paper's budget has none, so none here.
//   - Entropy in nats, theirs in bits: the rule compares two sums of the same base, so the kept set
//     is the same.
//   - Their processor takes its own temperature, uses it only for the mask and returns the logits
//     unscaled; here top-H follows the chain and uses its temperature, which the race then samples
//     with (their generate() with the same temperature in its warper does the same).
//   - p over what the chain kept (their processor sees the full row; with the chain off, as in
//     their examples, the two agree). Their code takes batch 1; here any batch.
//   - torch.topk's order of equal p is unspecified; here the smaller index first, as top-p.
// A backend's sampler stage runs it after the chain's thresholds (SamplerParams::top_h_n = N,
// top_h_fx = floor(alpha·2^32), 0 for alpha = 1): Z = Σ e over the kept set (e = exp(d), d = z − max z)
// gives each token's weight w = e·(ln Z − d) = Z·h; the top N by the logits' order keys (exact: the
// same order as the reference's fp64 z); the budget floor(Σ w·top_h_fx / 2^32) in the 64-bit fixed
// point of top-p's masses, and the mass search finds the first token whose w takes the running sum
// past it. Boundary tokens: those at positions where the running entropy is within rounding of τ
// (each h from an fp32 d and e, and Z's fixed-point sum, of which top_h_band is the bound).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/method.h"
#include "sampler.h"

namespace attnbench::decoding {

namespace {

// How far a stage's running entropy (as Σ w / Z) may be from the fp64 one, over the first N
// tokens of p (by position in `order`), d = z − zmax and L = ln Z: each h = p·(L − d) from an e
// with a relative error of a few ulp times (1 + |d| + |zmax|) (d is z − max z of fp32 z) and L − d
// with an absolute error of a few ulp of (L + |d| + |zmax|); each w truncated to 2^-40 and Z's sum
// of `kept` truncated terms moving L by kept·2^-40/Z.
double top_h_band(const std::vector<double>& p, const std::vector<double>& z, const std::vector<int64_t>& order, size_t N,
                  double zmax, double Z, double kept) {
  const double L = std::log(Z), unit = std::ldexp(1.0, -ATTNBENCH_SAMPLER_MASS_FRAC_BITS) / Z;
  double band = 0;
  for (size_t i = 0; i < N; ++i) {
    const int64_t x = order[i];
    const double a = 1 + L + std::abs(z[x] - zmax) + std::abs(zmax);
    band += threshold_band(3 * p[x] * a * a) + unit * (1 + kept * p[x]);
  }
  return band;
}

}  // namespace

class TopH final : public Sampler {
 public:
  TopH()
      : Sampler({.name = "top_h",
                 .summary = "the standard chain, then the most probable tokens while their entropy is within alpha of the top N's",
                 .catalog_id = "C-TOPH",
                 .paper = "Baghaei Potraghloo et al. 2025, Top-H Decoding",
                 .spec_version = 1}) {
    schema_.add({"top_n", ParamType::Int, Value(int64_t{100}), {}, 1.0, 65536.0, {},
                 "N: the budget is over the N most probable kept tokens, and at most N stay"});
    schema_.add({"alpha", ParamType::Float, Value(0.4), {}, 1e-6, 1.0, {},
                 "the entropy budget as a share of the top N's entropy, in (0, 1]"});
    add_sampling_params();
  }

  void stage_params(const Case& c, SamplerParams& s) const override {
    s.top_h_n = static_cast<int32_t>(c.i64("top_n"));
    const double alpha = c.f64("alpha");
    s.top_h_fx = alpha < 1 ? static_cast<uint32_t>(std::ldexp(alpha, 32)) : 0u;
  }

 protected:
  void process(const Case& c, ProcessedRow& row) const override {
    const std::vector<double> p = kept_probabilities(row);
    const auto V = static_cast<int64_t>(p.size());
    double zmax = -INFINITY, Z = 0;
    std::vector<int64_t> order;
    for (int64_t x = 0; x < V; ++x)
      if (row.kept[x]) order.push_back(x), zmax = std::max(zmax, row.z[x]);
    for (int64_t x : order) Z += std::exp(row.z[x] - zmax);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row.z[a] > row.z[b]; });
    const size_t N = std::min(static_cast<size_t>(c.i64("top_n")), order.size());
    std::vector<double> W(N + 1, 0.0);  // W[i]: the entropy of the first i
    for (size_t i = 0; i < N; ++i) {
      const double q = p[order[i]];
      W[i + 1] = W[i] + (q > 0 ? -q * std::log(q) : 0.0);
    }
    const double alpha = c.f64("alpha"), tau = alpha * W[N];
    size_t m = 1;
    while (m < N && W[m + 1] <= tau) ++m;
    if (alpha < 1) {
      const double band = 2 * top_h_band(p, row.z, order, N, zmax, Z, static_cast<double>(order.size()));
      for (size_t i = 2; i <= N; ++i)
        if (std::abs(W[i] - tau) <= band) row.boundary[order[i - 1]] = 1;
    }
    for (size_t i = m; i < order.size(); ++i) row.kept[order[i]] = 0, row.z[order[i]] = -INFINITY;
  }
};

}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::TopH);
