// eta — eta sampling: the standard chain, then keep the tokens with p ≥ η = min(ε, √ε·exp(−H)).
// Catalog: C-TYPICAL/EPS/ETA. Hewitt, Manning and Liang 2022, Truncation Sampling as Language
// Model Desmoothing; HF transformers' EtaLogitsWarper (generate's eta_cutoff).
//
// Semantics (spec_version 1): the decoding family's sampler contract (sampler.h) with a processor
// of its own after the standard four (HF transformers' order: temperature, top_k, top_p, min_p,
// then eta): p = softmax of the kept z and H = −Σ p ln p its entropy in nats; remove the kept
// tokens with p < η, except the ones at the kept maximum (the top token and its ties); then the race.
// Choices, and where they differ from the code they come from:
//   - epsilon in (0, 1), as HF requires (the paper suggests 3e-4 to 4e-3).
//   - H in nats over what the chain kept, as HF's Categorical(logits=scores).entropy() on the
//     chain's −inf-masked scores. The paper writes η = min(ε, √ε·exp(−h)) with h the entropy in
//     nats too; HF's docstring's sqrt(ε·e^−H) is a typo its code does not follow.
//   - min_tokens_to_keep is 1, HF's default for sampling.
// A backend's sampler stage runs it as the probability floor with the entropy term
// (SamplerParams::cutoff = ε, cutoff_entropy = 1): Z = Σ e and S = Σ e·(−d) over the kept set
// (d = z − max z, e = exp d, fixed point on the devices) give H = ln Z + S/Z, then e ≥ η·Z keeps
// a token. Tokens within floor_band of η are boundary ones.
#include <algorithm>
#include <cmath>

#include "attnbench/method.h"
#include "sampler.h"

namespace attnbench::decoding {

class Eta final : public Sampler {
 public:
  Eta()
      : Sampler({.name = "eta",
                 .summary = "the standard chain, then keep p >= min(epsilon, sqrt(epsilon) exp(-entropy))",
                 .catalog_id = "C-TYPICAL/EPS/ETA",
                 .paper = "Hewitt, Manning and Liang 2022, Truncation Sampling as Language Model Desmoothing",
                 .spec_version = 1}) {
    schema_.add({"epsilon", ParamType::Float, Value(0.002), {}, 1e-12, 1.0 - 1e-12, {},
                 "eta = min(epsilon, sqrt(epsilon) exp(-H)) (HF's eta_cutoff; the paper suggests 3e-4 to 4e-3)"});
    add_sampling_params();
  }

  void stage_params(const Case& c, SamplerParams& s) const override {
    s.cutoff = static_cast<float>(c.f64("epsilon"));
    s.cutoff_entropy = 1;
  }

 protected:
  void process(const Case& c, ProcessedRow& row) const override {
    const std::vector<double> p = kept_probabilities(row);
    const double eps = c.f64("epsilon");
    remove_below_floor(row, p, std::min(eps, std::sqrt(eps) * std::exp(-entropy(p))));
  }
};

}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::Eta);
