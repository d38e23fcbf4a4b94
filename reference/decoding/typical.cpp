// typical — locally typical sampling: the standard chain, then the tokens whose surprisal is
// nearest the entropy, until they hold `mass`.
// Catalog: C-TYPICAL/EPS/ETA. Meister, Pimentel, Wiher and Cotterell 2023, Locally Typical
// Sampling; HF transformers' TypicalLogitsWarper (generate's typical_p).
//
// Semantics (spec_version 1): the decoding family's sampler contract (sampler.h) with a processor
// of its own after the standard four (HF transformers' order: temperature, top_k, top_p, min_p,
// then typical): p = softmax of the kept z, H = −Σ p ln p, and each kept token's distance
// s = |−ln p − H|. In order of s ascending, the token where the running mass first reaches `mass`
// sets s*; every kept token with s ≤ s* stays (its ties included), the others go; then the race.
// Choices, and where they differ from the code they come from:
//   - mass in (0, 1), as HF requires.
//   - HF sorts s with torch.sort, whose order of equal s is unspecified, and keeps s ≤ the s at
//     the crossing position: the kept set does not depend on that order, and neither does this one.
//   - HF clamps the crossing position to the last token when rounding leaves the running mass
//     below `mass` at the end: all are kept; so here.
//   - min_tokens_to_keep is 1, HF's default for sampling; the first token in order of s is always
//     within s*, so it has no effect.
//   - s over what the chain kept (HF's warper sees the chain's −inf-masked scores: their s is +inf
//     and their p 0, so they neither count nor stay).
// A backend's sampler stage runs it after the chain's thresholds (SamplerParams::typical_fx =
// floor(mass·2^32)): with d = z − max z and e = exp d, Z = Σ e and S = Σ e·(−d) over the kept set
// give H = ln Z + S/Z and the mean of d under p, c = −S/Z, so s = |d − c|; then the same mass
// search as top-p's, over keys of −s with the target floor(Z·typical_fx / 2^32), every tie kept.
// Boundary tokens: those whose s is within rounding of s* (d's and c's fp32 errors), and, when the
// mass before s* or through it is within mass_slack of `mass`, the runs the threshold could move to.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/method.h"
#include "sampler.h"

namespace attnbench::decoding {

class Typical final : public Sampler {
 public:
  Typical()
      : Sampler({.name = "typical",
                 .summary = "the standard chain, then the tokens of surprisal nearest the entropy up to mass",
                 .catalog_id = "C-TYPICAL/EPS/ETA",
                 .paper = "Meister et al. 2023, Locally Typical Sampling",
                 .spec_version = 1}) {
    schema_.add({"mass", ParamType::Float, Value(0.9), {}, 1e-9, 1.0 - 1e-9, {},
                 "keep the tokens nearest the entropy until they hold this much mass (HF's typical_p)"});
    add_sampling_params();
  }

  void stage_params(const Case& c, SamplerParams& s) const override {
    s.typical_fx = static_cast<uint32_t>(std::ldexp(c.f64("mass"), 32));
  }

 protected:
  void process(const Case& c, ProcessedRow& row) const override {
    const std::vector<double> p = kept_probabilities(row);
    const double H = entropy(p), mass = c.f64("mass");
    const auto V = static_cast<int64_t>(p.size());
    double zmax = -INFINITY;
    std::vector<int64_t> order;
    for (int64_t x = 0; x < V; ++x)
      if (row.kept[x]) order.push_back(x), zmax = std::max(zmax, row.z[x]);
    std::vector<double> s(V, INFINITY);
    for (int64_t x : order) s[x] = std::abs(-std::log(p[x]) - H);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return s[a] < s[b]; });
    double running = 0;
    size_t at = order.size() - 1;
    for (size_t i = 0; i < order.size(); ++i)
      if ((running += p[order[i]]) >= mass) {
        at = i;
        break;
      }
    const double s_star = s[order[at]];
    // The distinct values of s next to s* and the masses below and through it.
    double below = 0, through = 0, s_next = INFINITY;
    for (int64_t x : order) {
      below += s[x] < s_star ? p[x] : 0;
      through += s[x] <= s_star ? p[x] : 0;
      if (s[x] > s_star) s_next = std::min(s_next, s[x]);
    }
    const double slack = mass_slack(static_cast<int64_t>(order.size()));
    // s within rounding of a value: a stage's d carries ~|d| ulp and its mean of d ~H.
    const auto near = [&](int64_t x, double v) {
      return std::abs(s[x] - v) <= threshold_band(1 + std::abs(row.z[x] - zmax) + 2 * H);
    };
    for (int64_t x : order) {
      if (near(x, s_star) && (s[x] != s_star || below >= mass - slack)) row.boundary[x] = 1;
      if (through <= mass + slack && near(x, s_next)) row.boundary[x] = 1;
      if (s[x] > s_star) row.kept[x] = 0, row.z[x] = -INFINITY;
    }
    // Equal s at s* from distinct logits (d = c ± s*): a stage's roundings may part them.
    double z_at = NAN;
    bool parted = false;
    for (int64_t x : order)
      if (s[x] == s_star) parted = parted || (z_at == z_at && row.z[x] != z_at), z_at = row.z[x];
    if (parted)
      for (int64_t x : order)
        if (s[x] == s_star) row.boundary[x] = 1;
  }
};

}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::Typical);
