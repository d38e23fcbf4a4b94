// frspec — the drafting LM head restricted to a frequency-ranked vocabulary subset, then chain
// verification: speculative decoding whose draft spends a V'×D GEMV instead of V×D on its head.
// Catalog: C-FRSPEC/VOCABTRIM. Zhao et al. 2025, FR-Spec: Accelerating Large-Vocabulary Language
// Models via Frequency-Ranked Speculative Sampling (thunlp/FR-Spec); Goel et al. 2025, VocabTrim
// (the same kernel, the subset ranked by the target's sampled tokens).
//
// Semantics (spec_version 1). Hidden rows h = chain·K + t (chain = the row, or 0 in distribution
// mode: `draws` rows share one chain), S = subset_ids (V' tokens, most frequent first):
//   draft_logits[h, j] = Σ_d lm_head[S_j, d]·hidden[h, d]           (fp32 accumulation on devices)
//   draft_probs[h, j]  = softmax_j(draft_logits[h, ·] / T)           (T = 0: one-hot at the first
//                                                                      maximum, the smaller j)
//   draft_token_ids[r, t] = S_j*, j* the exponential race (race.h) over draft_probs[h, ·] with
//                           u_j = U("frspec.draft", (r·K + t)·V' + j); T = 0: the first maximum
//   then speculative_sampling's verification (speculative_sampling.cpp) of those drafts with the
//   draft distribution q = draft_probs scattered to full-vocabulary ids (0 outside S) and the
//   target_probs, with that method's draws (U("spec.accept", …), U("spec.race", …), same seed).
// Outside S the draft has q = 0, so rejection sampling stays exact: the emitted tokens follow the
// target whatever the subset (STAT). With T = 0 the target is one-hot at its argmax and the chain
// emits the target's greedy tokens; the draft's token equals the full head's greedy draft whenever
// that one is in S (quality: argmax_in_subset).
//
// Inputs (the generator, G-FRSPEC: a synthetic draft model, as no weights are shipped):
//   token frequency   rank ρ_x of token x by a uniform key ("frspec.rank"); frequency ∝ (ρ+1)^-1.1
//   subset_ids [V'] i32  the V' tokens of smallest rank, in rank order (FR-Spec's frequency-ranked
//                        list; VocabTrim's list is another ranking of the same kind)
//   lm_head [V, D]    column 0 is the token's log-frequency prior −1.1·log(ρ+1); columns 1.. are
//                     uniform with variance 4/(D−1), so a logit is prior + about N(0, 4)
//   hidden [P, K, D]  column 0 is 1 (it reads the prior), columns 1.. uniform with variance 1
//   target_probs [P, K+1, V] f32  the target at each position: softmax(y/T), y_t = z_t + noise of
//                     variance 1 for t < K (z_t the full head's logits of the rounded inputs, fp64),
//                     y_K = prior + noise of variance 4 at the bonus position; T = 0: one-hot at
//                     the first argmax of y. exp and log are detmath's, so the bits are everywhere
//                     the same.
// Choices, and where they differ from the code they come from (FR-Spec's, as merged into SGLang's
// EAGLE worker: the draft's LM head sliced to the hot tokens, softmax over the sliced logits, the
// top-k's indices mapped back through hot_token_id):
//   - q is the softmax over the subset's logits, renormalised on S, as there; 0 outside S.
//   - The head's rows are sliced once there (a smaller weight); here every backend reads the rows
//     of S from the full head in place. The bytes read are the same V'·D.
//   - FR-Spec drafts EAGLE-2 trees and samples its tree's top-k; this method is one chain of K
//     drafts per row (the trees are the speculative-trees issue's), each drawn from q on S.
//   - The draft's hidden states are given per position (no draft model runs between positions:
//     a synthetic draft, as every weight here).
//   - Ties of the greedy draft go to the more frequent token (the smaller j in S).
// Checks: draft_logits TOL against the fp64 head with the same-precision baseline (sequential fp32
// dot products); draft_probs TOL with the baseline's fp32 softmax (T = 0: one-hot at the first
// maximum of the impl's own logits); draft_token_ids SEMI: the race over the impl's own draft_probs
// (T = 0: its own argmax), cut at a race decided within rounding (check_semi.h), every id in S;
// the chain's outputs by speculative_sampling's check against its reference given the impl's own
// draft (its q and tokens, each checked above), STAT in distribution mode.
#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_semi.h"
#include "attnbench/detmath.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "frspec_common.h"
#include "distribution_mode.h"
#include "gdist.h"
#include "race.h"

namespace attnbench::decoding {

FrspecParams frspec_params(const Case& c) {
  const int64_t draws = c.i64("draws"), batch = c.i64("batch");
  const double T = c.f64("temperature");
  FrspecParams s{};
  s.rows = static_cast<int32_t>(draws > 0 ? draws : batch);
  s.prob_rows = static_cast<int32_t>(draws > 0 ? 1 : batch);
  s.draft_len = static_cast<int32_t>(c.i64("draft_len"));
  s.vocab = static_cast<int32_t>(c.i64("vocab"));
  s.subset = static_cast<int32_t>(c.i64("subset"));
  s.hidden = static_cast<int32_t>(c.i64("hidden"));
  s.distribution = draws > 0;
  s.greedy = T == 0;
  s.inv_temperature = T == 0 ? 0.0f : static_cast<float>(1.0 / T);
  s.seed_lo = static_cast<uint32_t>(c.seed);
  s.seed_hi = static_cast<uint32_t>(c.seed >> 32);
  s.draft_stream = PhiloxStream(c.seed, kFrspecDraftSite, kDomainDraws).stream_id();
  return s;
}

Case frspec_verification_case(const Case& c) {
  const Method& m = registry().method("speculative_sampling");
  Case v;
  v.method = &m;
  v.dtype = DType::f32;
  v.seed = c.seed;
  v.params = m.schema().complete({{"batch", Value(c.i64("batch"))},
                                  {"draft_len", Value(c.i64("draft_len"))},
                                  {"vocab", Value(c.i64("vocab"))},
                                  {"draws", Value(c.i64("draws"))}},
                                 "");
  return v;
}

namespace {

constexpr double kZipfExponent = 1.1;      // token frequency ∝ (rank + 1)^-1.1
constexpr double kDraftSpread = 2.0;       // standard deviation of a logit's token-specific part
constexpr double kTargetNoise = 1.0;       // the target's departure from the draft (standard deviation)

// Tokens in order of frequency rank: a uniform key per token ("frspec.rank"), ties by index.
std::vector<int64_t> frequency_order(uint64_t seed, int64_t vocab) {
  const PhiloxStream key(seed, "frspec.rank", kDomainInputs);
  std::vector<int64_t> tokens(static_cast<size_t>(vocab));
  for (int64_t x = 0; x < vocab; ++x) tokens[x] = x;
  return rank_by_key(std::move(tokens), [&](int64_t x) { return key.uniform_f64(static_cast<uint64_t>(x)); });
}

// in_subset[x]: token x is one of the subset's.
std::vector<char> subset_mask(const HostTensor& subset, int64_t vocab) {
  std::vector<char> in(static_cast<size_t>(vocab), 0);
  for (int64_t j = 0; j < subset.numel(); ++j) in[static_cast<int64_t>(subset.get(j))] = 1;
  return in;
}

// The verification's inputs: the target, q on S scattered to full-vocabulary ids, the drafts.
TensorMap verification_inputs(const FrspecParams& s, const TensorMap& in, const HostTensor& probs, const HostTensor& ids) {
  const int64_t P = s.prob_rows, K = s.draft_len, V = s.vocab, Vs = s.subset;
  const HostTensor& subset = in.at("subset_ids");
  HostTensor q("draft_probs", DType::f64, {P, K, V});
  for (int64_t h = 0; h < P * K; ++h)
    for (int64_t j = 0; j < Vs; ++j) q.set(h * V + static_cast<int64_t>(subset.get(j)), probs.get(h * Vs + j));
  TensorMap v;
  v.emplace("target_probs", in.at("target_probs").clone());
  v.emplace("draft_probs", std::move(q));
  v.emplace("draft_token_ids", ids.clone());
  return v;
}

// softmax(z / T) in fp64, or one-hot at the first maximum when greedy.
std::vector<double> draft_distribution(const std::vector<double>& z, bool greedy, double inv_t) {
  std::vector<double> q(z.size(), 0.0);
  const size_t top = static_cast<size_t>(std::max_element(z.begin(), z.end()) - z.begin());
  if (greedy) {
    q[top] = 1.0;
    return q;
  }
  double total = 0;
  for (size_t j = 0; j < z.size(); ++j) total += q[j] = std::exp((z[j] - z[top]) * inv_t);
  for (double& x : q) x /= total;
  return q;
}

class Frspec final : public Method {
 public:
  Frspec() {
    info_ = {.name = "frspec",
             .family = "decoding",
             .summary = "drafting LM head over a frequency-ranked vocabulary subset, then chain verification",
             .catalog_id = "C-FRSPEC/VOCABTRIM",
             .paper = "Zhao et al. 2025, FR-Spec: Frequency-Ranked Speculative Sampling",
             .spec_version = 1,
             .phases = {},
             .dtypes = {DType::bf16, DType::f16, DType::f32}};
    schema_.add({"batch", ParamType::Int, Value(int64_t{4}), {}, 1.0, 1024.0, {}, "sequences drafted and verified at once"});
    schema_.add({"draft_len", ParamType::Int, Value(int64_t{4}), {}, 1.0, 16.0, {}, "K: draft tokens per sequence"});
    schema_.add({"vocab", ParamType::Int, Value(int64_t{32000}), {}, 2.0, 1048576.0, {}, "V: the target's vocabulary"});
    schema_.add({"subset", ParamType::Int, Value(int64_t{8192}), {}, 1.0, 1048576.0, {},
                 "V': the drafting vocabulary, the V' most frequent tokens"});
    schema_.add({"hidden", ParamType::Int, Value(int64_t{1024}), {}, 1.0, 16384.0, {}, "D: the draft model's hidden size"});
    schema_.add({"temperature", ParamType::Float, Value(1.0), {}, 0.0, 100.0, {}, "T of draft and target; 0 is greedy decoding"});
    schema_.add({"draws", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1e7, {},
                 "distribution mode: this many rows share one chain and the tokens are tested (0: off)"});
    schema_.rule("subset <= vocab", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("subset") <= p.i64("vocab")) return {};
      return cat("subset=", p.i64("subset"), " is larger than vocab=", p.i64("vocab"));
    });
    schema_.rule("vocab·hidden <= 2^31", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("vocab") * p.i64("hidden") <= (int64_t{1} << 31)) return {};
      return cat("an LM head of vocab=", p.i64("vocab"), " by hidden=", p.i64("hidden"), " exceeds 2^31 elements");
    });
    add_distribution_rules(schema_, "one chain to every row");
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const FrspecParams s = frspec_params(c);
    const int64_t H = int64_t{s.prob_rows} * s.draft_len, Vs = s.subset;
    OutputDecl logits{"draft_logits", DType::f32, {H, Vs}, CheckClass::TOL};
    logits.doc = "draft_logits [chains·K, subset]: the head's logits over the subset, in subset order";
    OutputDecl probs{"draft_probs", DType::f32, {H, Vs}, CheckClass::TOL};
    probs.doc = "draft_probs [chains·K, subset]: q = softmax(logits / T) over the subset (T = 0: one-hot)";
    OutputDecl ids{"draft_token_ids", DType::i32, {int64_t{s.rows}, int64_t{s.draft_len}}, CheckClass::SEMI};
    ids.doc = "draft_token_ids [rows, K]: each position's draft, drawn from q and mapped back to vocabulary ids";
    std::vector<OutputDecl> out = {logits, probs, ids};
    for (const OutputDecl& d : registry().method("speculative_sampling").outputs(frspec_verification_case(c)))
      if (!d.check_only) out.push_back(d);
    return out;
  }

  TensorMap inputs(const Case& c) const override;
  Reference reference(const Case& c, const TensorMap& in) const override;
  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override;
  Work work(const Case& c) const override;
  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override;

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

// fp64 logits of the full head for hidden row h, every token: out[x] = Σ_d W[x, d]·hidden[h, d].
void full_logits(const HostTensor& head, const std::vector<double>& hid, int64_t vocab, double* out) {
  const auto D = static_cast<int64_t>(hid.size());
  harness_pool().parallel_for(vocab, [&](int64_t begin, int64_t end) {
    std::vector<double> w(static_cast<size_t>(D));
    for (int64_t x = begin; x < end; ++x) {
      head.get_row(x * D, D, w.data());
      double acc = 0;
      for (int64_t d = 0; d < D; ++d) acc += w[d] * hid[d];
      out[x] = acc;
    }
  }, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, D)));
}

std::vector<double> hidden_row(const HostTensor& hidden, int64_t h, int64_t D) {
  std::vector<double> v(static_cast<size_t>(D));
  hidden.get_row(h * D, D, v.data());
  return v;
}

TensorMap Frspec::inputs(const Case& c) const {
  const FrspecParams s = frspec_params(c);
  const int64_t P = s.prob_rows, K = s.draft_len, V = s.vocab, Vs = s.subset, D = s.hidden;
  const std::vector<int64_t> order = frequency_order(c.seed, V);
  std::vector<int64_t> rank(static_cast<size_t>(V));
  for (int64_t i = 0; i < V; ++i) rank[order[i]] = i;
  HostTensor subset("subset_ids", DType::i32, {Vs});
  for (int64_t j = 0; j < Vs; ++j) subset.set(j, static_cast<double>(order[j]));

  HostTensor head("lm_head", c.dtype, {V, D});
  const PhiloxStream head_u(c.seed, "lm_head", kDomainInputs);
  const double spread = D > 1 ? kDraftSpread / std::sqrt(static_cast<double>(D - 1)) : 0.0;
  harness_pool().parallel_for(V, [&](int64_t begin, int64_t end) {
    for (int64_t x = begin; x < end; ++x) {
      head.set(x * D, -kZipfExponent * detmath::log(static_cast<double>(rank[x] + 1)));
      for (int64_t d = 1; d < D; ++d)
        head.set(x * D + d, spread * unit_uniform(head_u.uniform_f64(static_cast<uint64_t>(x * D + d))));
    }
  }, std::max<int64_t>(1, 65536 / D));
  HostTensor hidden("hidden", c.dtype, {P, K, D});
  const PhiloxStream hidden_u(c.seed, "hidden", kDomainInputs);
  for (int64_t h = 0; h < P * K; ++h) {
    hidden.set(h * D, 1.0);
    for (int64_t d = 1; d < D; ++d) hidden.set(h * D + d, unit_uniform(hidden_u.uniform_f64(static_cast<uint64_t>(h * D + d))));
  }

  // The target at each position, from the full head's logits of the rounded inputs.
  HostTensor target("target_probs", DType::f32, {P, K + 1, V});
  const PhiloxStream noise(c.seed, "target_probs", kDomainInputs);
  const double T = c.f64("temperature");
  std::vector<double> y(static_cast<size_t>(V));
  for (int64_t pr = 0; pr < P; ++pr) {
    for (int64_t t = 0; t <= K; ++t) {
      const int64_t slot = pr * (K + 1) + t;
      if (t < K) full_logits(head, hidden_row(hidden, pr * K + t, D), V, y.data());
      for (int64_t x = 0; x < V; ++x) {
        const double u = unit_uniform(noise.uniform_f64(static_cast<uint64_t>(slot * V + x)));
        y[x] = t < K ? y[x] + kTargetNoise * u : head.get(x * D) + kDraftSpread * u;
      }
      const int64_t top = std::max_element(y.begin(), y.end()) - y.begin();
      if (T == 0) {
        target.set(slot * V + top, 1.0);
        continue;
      }
      double total = 0;
      for (int64_t x = 0; x < V; ++x) total += y[x] = detmath::exp((y[x] - y[top]) / T);
      for (int64_t x = 0; x < V; ++x) target.set(slot * V + x, y[x] / total);
    }
  }
  TensorMap in;
  in.emplace("subset_ids", std::move(subset));
  in.emplace("lm_head", std::move(head));
  in.emplace("hidden", std::move(hidden));
  in.emplace("target_probs", std::move(target));
  return in;
}

Reference Frspec::reference(const Case& c, const TensorMap& in) const {
  const FrspecParams s = frspec_params(c);
  const int64_t R = s.rows, K = s.draft_len, Vs = s.subset, D = s.hidden, H = int64_t{s.prob_rows} * K;
  const HostTensor &head = in.at("lm_head"), &hidden = in.at("hidden"), &subset = in.at("subset_ids");
  HostTensor logits("draft_logits", DType::f64, {H, Vs}), probs("draft_probs", DType::f64, {H, Vs});
  HostTensor logits32("draft_logits", DType::f32, {H, Vs}), probs32("draft_probs", DType::f32, {H, Vs});
  const float inv_t = s.inv_temperature;
  harness_pool().parallel_for(H, [&](int64_t begin, int64_t end) {
    std::vector<double> z(static_cast<size_t>(Vs));
    std::vector<float> w32(static_cast<size_t>(D)), h32(static_cast<size_t>(D)), z32(static_cast<size_t>(Vs));
    for (int64_t h = begin; h < end; ++h) {
      const std::vector<double> hid = hidden_row(hidden, h, D);
      hidden.get_row(h * D, D, h32.data());
      for (int64_t j = 0; j < Vs; ++j) {
        const auto x = static_cast<int64_t>(subset.get(j));
        head.get_row(x * D, D, w32.data());  // exact: the head's dtype widens to fp32
        double acc = 0;
        float acc32 = 0;  // the baseline: a sequential fp32 dot product
        for (int64_t d = 0; d < D; ++d) {
          acc += static_cast<double>(w32[d]) * hid[d];
          acc32 += w32[d] * h32[d];
        }
        z[j] = acc;
        z32[j] = acc32;
        logits.set(h * Vs + j, acc);
        logits32.set(h * Vs + j, acc32);
      }
      const std::vector<double> q = draft_distribution(z, s.greedy, 1.0 / c.f64("temperature"));
      for (int64_t j = 0; j < Vs; ++j) probs.set(h * Vs + j, q[j]);
      // The baseline's fp32 softmax of its own logits.
      if (s.greedy) {
        probs32.set(h * Vs + (std::max_element(z32.begin(), z32.end()) - z32.begin()), 1.0);
        continue;
      }
      const float m = *std::max_element(z32.begin(), z32.end());
      float total = 0;
      for (float& v : z32) total += v = std::exp((v - m) * inv_t);
      for (int64_t j = 0; j < Vs; ++j) probs32.set(h * Vs + j, z32[j] / total);
    }
  }, 1);

  // Each row's drafts: the race over q (T = 0: the argmax), mapped back to vocabulary ids.
  HostTensor ids("draft_token_ids", DType::i32, {R, K});
  const PhiloxStream draws(c.seed, kFrspecDraftSite, kDomainDraws);
  harness_pool().parallel_for(R * K, [&](int64_t begin, int64_t end) {
    std::vector<double> q(static_cast<size_t>(Vs));
    std::vector<uint32_t> words;
    for (int64_t n = begin; n < end; ++n) {
      const int64_t r = n / K, t = n % K, h = frspec_chain_of(s, r) * K + t;
      probs.get_row(h * Vs, Vs, q.data());
      const int64_t j = s.greedy ? std::max_element(q.begin(), q.end()) - q.begin()
                                 : race_weights(draws, frspec_draft_index(s, r, t, 0), q, words).token;
      ids.set(n, subset.get(j));
    }
  }, 256);

  const Case vc = frspec_verification_case(c);
  const TensorMap vin = verification_inputs(s, in, probs, ids);
  Reference vref = vc.method->reference(vc, vin);
  Reference ref;
  ref.baseline_err["draft_logits"] = max_abs_diff(logits, logits32);
  ref.baseline_err["draft_probs"] = max_abs_diff(probs, probs32);
  ref.tensors.emplace("draft_logits", std::move(logits));
  ref.tensors.emplace("draft_probs", std::move(probs));
  ref.tensors.emplace("draft_token_ids", std::move(ids));
  for (auto& [name, t] : vref.tensors) ref.tensors.emplace(name, std::move(t));
  return ref;
}

CheckReport Frspec::check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const {
  const FrspecParams s = frspec_params(c);
  const int64_t R = s.rows, K = s.draft_len, Vs = s.subset, H = int64_t{s.prob_rows} * K;
  const std::vector<OutputDecl> decls = outputs(c);
  const HostTensor &subset = in.at("subset_ids"), &got_logits = got.at("draft_logits"), &got_probs = got.at("draft_probs"),
                   &got_ids = got.at("draft_token_ids");
  CheckReport report;
  report.outputs.push_back(
      check_tol(decls[0], ref.tensors.at("draft_logits"), got_logits, ref.baseline_err.at("draft_logits")));

  // Greedy: q is one-hot at the first maximum of the impl's own logits.
  std::vector<int64_t> argmax(static_cast<size_t>(H));
  for (int64_t h = 0; h < H; ++h) {
    int64_t best = 0;
    for (int64_t j = 1; j < Vs; ++j)
      if (got_logits.get(h * Vs + j) > got_logits.get(h * Vs + best)) best = j;
    argmax[h] = best;
  }
  if (s.greedy) {
    HostTensor onehot("draft_probs", DType::f32, {H, Vs});
    for (int64_t h = 0; h < H; ++h) onehot.set(h * Vs + argmax[h], 1.0);
    OutputCheck o = check_exact(decls[1], onehot, got_probs, nullptr);
    if (!o.pass) o.message = "not one-hot at the first maximum of its own draft_logits: " + o.message;
    report.outputs.push_back(o);
  } else {
    report.outputs.push_back(check_tol(decls[1], ref.tensors.at("draft_probs"), got_probs, ref.baseline_err.at("draft_probs")));
  }

  // The drafts: the race over the impl's own q (its argmax when greedy), cut where a race is decided
  // within rounding; every id in the subset.
  HostTensor expected("draft_token_ids", DType::i32, {R, K}), lengths("lengths", DType::i32, {R});
  lengths.fill(static_cast<double>(K));
  std::vector<int64_t> cut(static_cast<size_t>(R), kNoCut);
  const PhiloxStream draws(c.seed, kFrspecDraftSite, kDomainDraws);
  const std::vector<char> in_subset = subset_mask(subset, s.vocab);
  std::string broken;
  harness_pool().parallel_for(R, [&](int64_t begin, int64_t end) {
    std::vector<double> q(static_cast<size_t>(Vs));
    std::vector<uint32_t> words;
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t t = 0; t < K; ++t) {
        const int64_t h = frspec_chain_of(s, r) * K + t;
        int64_t j = argmax[h];
        if (!s.greedy) {
          got_probs.get_row(h * Vs, Vs, q.data());
          const RaceResult rc = race_weights(draws, frspec_draft_index(s, r, t, 0), q, words);
          j = rc.token;
          if (cut[r] == kNoCut && race_is_boundary(rc.gap)) cut[r] = t;
        }
        expected.set(r * K + t, subset.get(j));
      }
    }
  }, 64);
  for (int64_t n = 0; n < R * K && broken.empty(); ++n) {
    const double x = got_ids.get(n);
    if (x < 0 || x >= s.vocab || !in_subset[static_cast<int64_t>(x)])
      broken = cat("row ", n / K, ": draft ", x, " at ", n % K, " is not a token of the subset");
  }
  OutputCheck o = check_semi(decls[2], expected, lengths, got_ids, lengths, cut);
  if (!broken.empty()) {
    o.pass = false;
    o.message = broken;
  }
  report.outputs.push_back(o);

  // The chain, given the impl's own draft.
  const Case vc = frspec_verification_case(c);
  const TensorMap vin = verification_inputs(s, in, got_probs, got_ids);
  const Reference vref = vc.method->reference(vc, vin);
  for (OutputCheck& v : vc.method->check(vc, vin, vref, got).outputs) report.outputs.push_back(std::move(v));
  return report;
}

Work Frspec::work(const Case& c) const {
  const FrspecParams s = frspec_params(c);
  const double H = static_cast<double>(s.prob_rows) * s.draft_len, Vs = s.subset, D = s.hidden, R = s.rows, K = s.draft_len;
  const double elt = static_cast<double>(dtype_size(c.dtype));
  const Work v = registry().method("speculative_sampling").work(frspec_verification_case(c));
  Work w;
  // The head's GEMV, the softmax (a subtraction, a multiply, an exp and a division per logit), the
  // race over the subset at every draft position, then the verification.
  w.flops = 2 * H * Vs * D + 4 * H * Vs + 6 * R * K * Vs + v.flops;
  // The subset's rows of the head and the hidden states read once, logits and q written once and q
  // read by the race and scattered for the verification, then the verification's bytes.
  w.bytes = Vs * D * elt + H * D * elt + Vs * 4 + H * Vs * 4 * 4 + R * K * 4 + v.bytes;
  w.bound = Bound::read;
  return w;
}

Json Frspec::quality(const Case& c, const TensorMap& in, const TensorMap& out) const {
  const FrspecParams s = frspec_params(c);
  const int64_t R = s.rows, K = s.draft_len, V = s.vocab, Vs = s.subset, D = s.hidden;
  const HostTensor &head = in.at("lm_head"), &hidden = in.at("hidden"), &subset = in.at("subset_ids"),
                   &target = in.at("target_probs");
  // What the subset costs in acceptance: the full head's draft against the subset's, position by
  // position on the first chains (the full head is V·D per position: at most 2^31 multiply-adds).
  const int64_t chains = std::clamp<int64_t>((int64_t{1} << 31) / std::max<int64_t>(1, V * D * K), 1, s.prob_rows);
  const double inv_t = s.greedy ? 0.0 : 1.0 / c.f64("temperature");
  std::vector<double> z(static_cast<size_t>(V)), p(static_cast<size_t>(V)), zs(static_cast<size_t>(Vs));
  const std::vector<char> in_subset = subset_mask(subset, V);
  double mass_in_subset = 0, argmax_in = 0, alpha_full = 0, alpha_subset = 0, len_full = 0, len_subset = 0;
  for (int64_t pr = 0; pr < chains; ++pr) {
    double reach_full = 1, reach_subset = 1;
    for (int64_t t = 0; t < K; ++t) {
      const int64_t h = pr * K + t;
      full_logits(head, hidden_row(hidden, h, D), V, z.data());
      for (int64_t j = 0; j < Vs; ++j) zs[j] = z[static_cast<int64_t>(subset.get(j))];
      const std::vector<double> qf = draft_distribution(z, s.greedy, inv_t), qs = draft_distribution(zs, s.greedy, inv_t);
      target.get_row((pr * (K + 1) + t) * V, V, p.data());
      double in_s = 0, a_full = 0, a_subset = 0;
      for (int64_t x = 0; x < V; ++x) a_full += std::min(p[x], qf[x]);
      for (int64_t j = 0; j < Vs; ++j) {
        const auto x = static_cast<int64_t>(subset.get(j));
        in_s += qf[x];
        a_subset += std::min(p[x], qs[j]);
      }
      mass_in_subset += in_s;
      argmax_in += in_subset[std::max_element(z.begin(), z.end()) - z.begin()];
      alpha_full += a_full;
      alpha_subset += a_subset;
      len_full += reach_full *= a_full;
      len_subset += reach_subset *= a_subset;
    }
  }
  const double positions = static_cast<double>(chains * K);
  double accepted = 0, per_position = 0;
  for (int64_t r = 0; r < R; ++r) {
    accepted += out.at("emitted_draft_token_num").get(r);
    per_position += out.at("accepted_token_num").get(r);
  }
  Json q = Json::object();
  q["head_fraction"] = static_cast<double>(Vs) / static_cast<double>(V);
  q["subset_mass"] = mass_in_subset / positions;
  q["argmax_in_subset"] = argmax_in / positions;
  q["expected_acceptance_rate"] = alpha_subset / positions;
  q["expected_acceptance_rate_full_vocab"] = alpha_full / positions;
  q["expected_accepted_len"] = len_subset / static_cast<double>(chains);
  q["expected_accepted_len_full_vocab"] = len_full / static_cast<double>(chains);
  q["mean_accepted_len"] = accepted / static_cast<double>(R);
  q["acceptance_rate"] = per_position / static_cast<double>(R * K);
  if (s.distribution) {
    const Case vc = frspec_verification_case(c);
    const Json v = vc.method->quality(vc, verification_inputs(s, in, out.at("draft_probs"), out.at("draft_token_ids")), out);
    q["stat_p_value"] = v["stat_p_value"];
    q["stat_alpha"] = v["stat_alpha"];
  }
  return q;
}

}  // namespace
}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::Frspec);
