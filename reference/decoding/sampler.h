// The decoding family's sampler contract: a method that turns a row of logits into a kept set and
// one sampled token. A method is its own logits processor (typical, epsilon, eta, top-H, ...) and
// its parameters; this base owns the rest, once:
//
//   schema     batch, vocab, temperature, top_k, top_p, min_p, then the method's own, then draws
//              (distribution mode) and dist (the G-DIST shape of the logits)
//   inputs     logits [batch, vocab] f32 = log p of a G-DIST distribution (gdist.h), one row
//              broadcast to every draw in distribution mode
//   chain      HF transformers' order, each step over what the steps before it kept, fp64:
//                temperature  z = l / T; T = 0 is greedy (argmax, the smaller index on ties)
//                top_k        keep z ≥ the k-th largest kept z (ties at that value all kept)
//                top_p        p = softmax of the kept z; in order of z descending (smaller index
//                             first on ties) keep a token while the mass before it is < top_p
//                min_p        p as above; keep p ≥ min_p·max p
//                the method's own processor (process()), which a backend's sampler stage runs
//                from the fields the method sets in SamplerParams (stage_params())
//   sample     the exponential race (race.h) over the kept tokens with log-weights z, uniform
//              U("sample.race", row·vocab + x)
//   outputs    kept [rows, ceil(vocab/32)] i32, bit x%32 of word x/32 set for a kept token, the
//              bits past vocab 0 — SET; token [rows] i32 — SEMI (STAT in distribution mode)
//   checks     kept: the reference's set, except tokens whose membership the reference marks as
//              decided within rounding (check-only kept_boundary: z within a few ulp of the
//              top-k threshold, the mass before a top-p candidate within the fp32 error of a
//              sum of the kept probabilities, p within a few ulp of the min-p threshold);
//              token: in the impl's own kept set, and the reference's unless the row's kept sets
//              differ or the race is a boundary event (check-only race_gap, check_semi.h);
//              distribution mode: a chi-square test of the tokens against softmax(z) over the
//              impl's kept set, with power twins in the tests (check_stat.h)
//   quality    mean kept count, and in distribution mode the test's p-value
#pragma once

#include <cstdint>
#include <vector>

#include <functional>

#include "attnbench/check_stat.h"
#include "attnbench/method.h"
#include "gdist.h"
#include "sampler_common.h"

namespace attnbench::decoding {

// One row through the chain: processed logits z (−inf where removed), the kept set, and the
// tokens whose membership is decided within rounding.
struct ProcessedRow {
  std::vector<double> z;
  std::vector<char> kept, boundary;
  int64_t greedy = -1;  // temperature 0: the argmax
};

struct ProcessorChain {
  double temperature = 1, top_p = 1, min_p = 0;
  int64_t top_k = 0;
};

// The four standard processors of a row of logits (the method's own is applied by the Sampler).
ProcessedRow standard_chain(const ProcessorChain& chain, const double* logits, int64_t vocab);
// softmax of z over the kept tokens (0 elsewhere).
std::vector<double> kept_probabilities(const ProcessedRow& row);
// How far an fp32 stage's sum of n kept probabilities may be from the fp64 one (top-p, typical).
double mass_slack(int64_t n);
// How far an fp32 stage's value of v, computed from a few roundings of its inputs, may be from the
// fp64 one, relative to v's scale (a threshold compared with it).
double threshold_band(double v);
// −Σ p log p in nats.
double entropy(const std::vector<double>& p);

// A probability floor (epsilon and eta sampling; the stages' `cutoff`): the kept tokens with
// p < floor are removed, p = kept_probabilities(row), except those at the kept maximum of z (HF's
// min_tokens_to_keep = 1 keeps the top token and its ties). A token is a boundary one when p is
// within floor_band of the floor.
void remove_below_floor(ProcessedRow& row, const std::vector<double>& p, double floor);
// How far an fp32 stage's floor may be from the fp64 one: the stage compares e = exp(d) with
// floor·Z, Z = Σ e over the kept set, and (eta) takes H from the same sums, each e with an error
// of a few ulp times |d|; at the floor |d| ≤ |log floor| and the kept set's mean |d| ≤ H.
double floor_band(double floor, double entropy);

class Sampler : public Method {
 public:
  const MethodInfo& info() const final { return info_; }
  const ParamSchema& schema() const final { return schema_; }
  std::vector<OutputDecl> outputs(const Case& c) const override;
  TensorMap inputs(const Case& c) const final;
  Reference reference(const Case& c, const TensorMap& in) const override;
  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override;
  Work work(const Case& c) const override;
  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override;

  ProcessorChain chain(const Case& c) const;
  // The fields of a backend's sampler stage that run the method's own processor (none by default).
  virtual void stage_params(const Case& /*c*/, SamplerParams& /*s*/) const {}
  // Row `row` of the case through the chain and the method's own processor.
  ProcessedRow process_row(const Case& c, const TensorMap& in, int64_t row) const;

 protected:
  explicit Sampler(MethodInfo info);
  // Adds draws and dist; a method's constructor calls it after adding its own parameters.
  void add_sampling_params();
  // The method's own processor, after the standard four: may remove tokens (z = −inf, kept 0)
  // and mark boundary tokens. Default: none.
  virtual void process(const Case& /*c*/, ProcessedRow& /*row*/) const {}
  // For a method that draws something else from the kept set (its own outputs, reference, check
  // and quality): the kept output's SET check, row_differs[r] set where row r's kept set differs
  // from the reference's (at boundary tokens); and the mean kept count of an output.
  OutputCheck check_kept(const Case& c, const Reference& ref, const TensorMap& got, std::vector<char>& row_differs) const;
  double mean_kept(const Case& c, const TensorMap& out) const;
  // Distribution mode (draws > 0): the token output's verdict becomes that of its tests (STAT,
  // Bonferroni over them) when it and kept passed; tests() runs them only then.
  static void apply_stat(const Case& c, const OutputDecl& token, const OutputCheck& kept, OutputCheck& tok,
                         const std::function<std::vector<GofResult>()>& tests);
  // quality's stat_p_value (Bonferroni over the tests) and stat_alpha, in distribution mode.
  static void stat_quality(const Case& c, Json& q, const std::function<std::vector<GofResult>()>& tests);

  ParamSchema schema_;

 private:
  MethodInfo info_;
};

// Row `row` of a mask [rows, words] from one flag per token.
void set_mask(HostTensor& mask, int64_t row, int64_t words, const std::vector<char>& bits);

// Bits of a kept mask: word x / 32, bit x % 32.
inline bool mask_bit(const HostTensor& mask, int64_t row, int64_t words, int64_t x) {
  const auto w = static_cast<uint32_t>(static_cast<int64_t>(mask.get(row * words + x / 32)));
  return (w >> (x % 32)) & 1u;
}

}  // namespace attnbench::decoding
