// epsilon — epsilon sampling: the standard chain, then keep the tokens with p ≥ ε.
// Catalog: C-TYPICAL/EPS/ETA. Hewitt, Manning and Liang 2022, Truncation Sampling as Language
// Model Desmoothing; HF transformers' EpsilonLogitsWarper (generate's epsilon_cutoff).
//
// Semantics (spec_version 1): the decoding family's sampler contract (sampler.h) with a processor
// of its own after the standard four (HF transformers' order: temperature, top_k, top_p, min_p,
// then epsilon): p = softmax of the kept z; remove the kept tokens with p < epsilon, except the
// ones at the kept maximum (HF's min_tokens_to_keep = 1: the top token and its ties); then the race.
// Choices, and where they differ from the code they come from:
//   - epsilon in (0, 1), as HF requires; the schema refuses 0 (use `sampling`) and 1.
//   - min_tokens_to_keep is 1, HF's default for sampling (2 is HF's for beam search, out of scope).
//   - p is over what the chain kept (HF's warper runs on the chain's −inf-masked scores, so its
//     softmax is the same renormalisation).
// A backend's sampler stage runs it as the probability floor (SamplerParams::cutoff = ε): after
// the chain's thresholds, Z = Σ e over the kept set (e = exp(z − max z), fixed point on the
// devices), then e ≥ ε·Z keeps a token. Tokens within floor_band of ε are boundary ones.
#include <cmath>

#include "attnbench/method.h"
#include "sampler.h"

namespace attnbench::decoding {

class Epsilon final : public Sampler {
 public:
  Epsilon()
      : Sampler({.name = "epsilon",
                 .summary = "the standard chain, then keep p >= epsilon (the top token always)",
                 .catalog_id = "C-TYPICAL/EPS/ETA",
                 .paper = "Hewitt, Manning and Liang 2022, Truncation Sampling as Language Model Desmoothing",
                 .spec_version = 1}) {
    schema_.add({"epsilon", ParamType::Float, Value(0.0009), {}, 1e-12, 1.0 - 1e-12, {},
                 "keep tokens with p >= epsilon (HF's epsilon_cutoff; the paper suggests 3e-4 to 9e-4)"});
    add_sampling_params();
  }

  void stage_params(const Case& c, SamplerParams& s) const override { s.cutoff = static_cast<float>(c.f64("epsilon")); }

 protected:
  void process(const Case& c, ProcessedRow& row) const override {
    remove_below_floor(row, kept_probabilities(row), c.f64("epsilon"));
  }
};

}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::Epsilon);
