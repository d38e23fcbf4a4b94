// penalties — repetition, frequency and presence penalties on a row of logits from a token history.
// Catalog: C-PENALTY. Keskar et al. 2019, CTRL (the repetition penalty); OpenAI's frequency and
// presence penalties as vLLM applies them.
//
// Semantics (spec_version 1): per row b, count_x = how often token x occurs in history[b] (L tokens);
// for a token with count_x > 0:
//   z ← z/θ where z > 0, z·θ elsewhere         (CTRL's repetition penalty θ, HF's rule)
//   z ← z − α_f·count_x − α_p                   (frequency α_f, presence α_p)
// and the other tokens keep their logit.
//   inputs   logits [batch, vocab] f32 (normal, scale 3: both signs, as a language model's);
//            history [batch, history] i32, ids min(V − 1, ⌊V·u³⌋) so low ids recur
//   outputs  logits [batch, vocab] f32 — TOL (fp32 baseline: penalties_common.h's penalised());
//            counts [batch, vocab] i32 — EXACT
// Choices, and where they differ from the code they come from:
//   - HF's RepetitionPenaltyLogitsProcessor multiplies where z < 0 and divides elsewhere; at z = 0
//     both give 0, so this is its rule. It reads the ids of the whole sequence; vLLM applies θ to
//     prompt and output tokens and α_f, α_p to output tokens only. One history serves all three
//     here: a caller with two passes the union for θ (the counts do not change θ's effect).
//   - The order is vLLM's (θ first, then α_f and α_p); θ = 1 and α = 0 turn each off.
//   - θ in [1e-3, 1e3] (HF requires θ > 0); α_f, α_p in [−2, 2] (OpenAI's range).
// The counts are an output: a backend's scatter (atomics or a sort) is checked exactly.
#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/inputs.h"
#include "attnbench/method.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "penalties_common.h"

namespace attnbench::decoding {

PenaltiesParams penalties_params(const Case& c) {
  PenaltiesParams p{};
  p.batch = static_cast<int32_t>(c.i64("batch"));
  p.vocab = static_cast<int32_t>(c.i64("vocab"));
  p.history = static_cast<int32_t>(c.i64("history"));
  p.repetition = static_cast<float>(c.f64("repetition"));
  p.frequency = static_cast<float>(c.f64("frequency"));
  p.presence = static_cast<float>(c.f64("presence"));
  return p;
}

class Penalties final : public Method {
 public:
  Penalties() {
    schema_.add({"batch", ParamType::Int, Value(int64_t{4}), {}, 1.0, 65536.0, {}, "rows"});
    schema_.add({"vocab", ParamType::Int, Value(int64_t{32000}), {}, 1.0, 1048576.0, {}, "V: vocabulary size"});
    schema_.add({"history", ParamType::Int, Value(int64_t{256}), {}, 0.0, 1048576.0, {}, "tokens of history per row"});
    schema_.add({"repetition", ParamType::Float, Value(1.2), {}, 1e-3, 1e3, {},
                 "theta: a seen token's z / theta where z > 0, z * theta elsewhere (1: off)"});
    schema_.add({"frequency", ParamType::Float, Value(0.0), {}, -2.0, 2.0, {}, "alpha_f: minus alpha_f * count"});
    schema_.add({"presence", ParamType::Float, Value(0.0), {}, -2.0, 2.0, {}, "alpha_p: minus alpha_p for a seen token"});
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const PenaltiesParams p = penalties_params(c);
    OutputDecl logits{"logits_out", DType::f32, {p.batch, p.vocab}, CheckClass::TOL};
    logits.doc = "logits_out [batch, vocab]: the penalised logits";
    OutputDecl counts{"counts", DType::i32, {p.batch, p.vocab}, CheckClass::EXACT};
    counts.doc = "counts [batch, vocab]: occurrences of each token in the row's history";
    return {logits, counts};
  }

  TensorMap inputs(const Case& c) const override {
    const PenaltiesParams p = penalties_params(c);
    TensorMap in;
    in.emplace("logits", normal_tensor("logits", DType::f32, {p.batch, p.vocab}, c.seed, 3.0));
    HostTensor history("history", DType::i32, {p.batch, p.history});
    const PhiloxStream ids(c.seed, "history", kDomainInputs);
    for (int64_t n = 0; n < int64_t{p.batch} * p.history; ++n) {
      const double u = ids.uniform_f32(static_cast<uint64_t>(n));
      history.set(n, std::min<double>(p.vocab - 1, std::floor(p.vocab * u * u * u)));
    }
    in.emplace("history", std::move(history));
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const PenaltiesParams p = penalties_params(c);
    const int64_t V = p.vocab, L = p.history;
    HostTensor out("logits_out", DType::f64, {p.batch, V}), base("logits_out", DType::f64, {p.batch, V});
    HostTensor counts("counts", DType::i32, {p.batch, V});
    const double theta = c.f64("repetition"), af = c.f64("frequency"), ap = c.f64("presence");
    harness_pool().parallel_for(p.batch, [&](int64_t begin, int64_t end) {
      std::vector<int> count(V);
      std::vector<double> z(V);
      for (int64_t b = begin; b < end; ++b) {
        std::fill(count.begin(), count.end(), 0);
        for (int64_t i = 0; i < L; ++i) ++count[static_cast<int64_t>(in.at("history").get(b * L + i))];
        in.at("logits").get_row(b * V, V, z.data());
        for (int64_t x = 0; x < V; ++x) {
          const int n = count[x];
          double r = z[x];
          if (n > 0) r = (r > 0 ? r / theta : r * theta) - af * n - ap;
          out.set(b * V + x, r);
          base.set(b * V + x, penalised(p, static_cast<float>(z[x]), n));
          counts.set(b * V + x, n);
        }
      }
    });
    Reference ref;
    ref.baseline_err["logits_out"] = max_abs_diff(out, base);
    ref.tensors.emplace("logits_out", std::move(out));
    ref.tensors.emplace("counts", std::move(counts));
    return ref;
  }

  Work work(const Case& c) const override {
    const PenaltiesParams p = penalties_params(c);
    const double BV = double{1.0} * p.batch * p.vocab;
    Work w;
    w.flops = 4 * BV;  // per token: the compare, θ's product or quotient, two subtractions
    // Logits read and written, counts written, the history read.
    w.bytes = 12 * BV + 4.0 * p.batch * p.history;
    w.bound = Bound::copy;
    return w;
  }

 private:
  MethodInfo info_{.name = "penalties",
                   .family = "decoding",
                   .summary = "repetition, frequency and presence penalties from a token history",
                   .catalog_id = "C-PENALTY",
                   .paper = "Keskar et al. 2019, CTRL (repetition penalty); OpenAI frequency and presence penalties",
                   .spec_version = 1,
                   .dtypes = {DType::f32}};
  ParamSchema schema_;
};

}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::Penalties);
