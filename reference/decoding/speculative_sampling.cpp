// speculative_sampling — chain verification of K draft tokens by modified rejection sampling.
// Catalog: C-SPECSAMP. Papers: Chen et al. 2023, Accelerating Large Language Model
// Decoding with Speculative Sampling; Leviathan et al. 2023. Interface after FlashInfer's
// chain_speculative_sampling.
//
// Semantics (spec_version 1). Row r (R = batch rows, or `draws` rows in distribution mode) reads
// probability row pr = r (distribution mode: pr = 0 for every row, p and q broadcast):
//   for i = 0 .. K−1, x_i = draft_token_ids[r, i], u_i = U("spec.accept", r·K + i):
//     accept iff u_i·q_i(x_i) < p_i(x_i)   (u_i < p/q; q = 0 accepts iff p > 0), else stop at i
//   the first rejection at i emits a token from max(0, p_i − q_i) by the exponential race; when all
//   K are accepted, position K emits a bonus token from p_K (target_probs[pr, K]).
//   Exponential race at position t with weights w over the vocabulary: token = argmax_x
//   (log w_x − log(−log u_x)), u_x = U("spec.race", (r·(K+1) + t)·V + x), no normalisation; ties
//   (and a race where every key is −inf) go to the smallest index with w_x > 0. A residual that is
//   all zero (p_i ≤ q_i everywhere; fp32 subtraction is exact about zero) races over p_i instead,
//   with the same uniforms.
//   U(site, n) = PhiloxStream(seed, site, kDomainDraws).uniform_f32(n) = (w_n >> 8)·2^-24 (rng.h).
//
// Inputs (f32 unless said): draft_probs [P, K, V], target_probs [P, K+1, V] (P = batch, or 1 in
// distribution mode), from G-DIST (gdist.h): p_t at slot pr·(K+1) + t with shape `dist`, q_t next to
// it by relation `draft`; draft_token_ids [R, K] i32, x_{r,i} drawn from q̄_i by inverse CDF (token
// order ascending, fp64 cumulative sum of the f32 values) with the fp64 input uniform
// n = r·K + i of stream "draft_token_ids".
//
// Outputs:
//   tokens                  [R, K+1] i32  SEMI (STAT in distribution mode), length `emitted`, pad −1
//   emitted                 [R]      i32  SEMI  tokens written: accepted drafts + 1
//   accepted_token_num      [R]      i32  SEMI  FlashInfer's: drafts i with u_i·q < p counted over
//                                                all K positions, ignoring the stop
//   emitted_draft_token_num [R]      i32  SEMI  FlashInfer's: draft tokens emitted (no bonus); the
//                                                accepted length
// Check-only (reference): accept_margin [R, K] f64 = (u − p/q)/max(1, p/q); accept_each [R, K] i32;
// race_token [R, K+1] i32 and race_gap [R, K+1] f64 = (k1 − k2)/max(1, |k1|, |k2|) of the race at
// every position as if the row stopped there. Boundary events (check_semi.h): |accept_margin| ≤
// 2ε, race_gap ≤ 144ε (ε = 2^-23).
#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_semi.h"
#include "attnbench/check_stat.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "chain_verify.h"
#include "distribution_mode.h"
#include "gdist.h"
#include "speculative_sampling_common.h"
#include "speculative_sampling_stat.h"

namespace attnbench::decoding {

SpeculativeParams speculative_params(const Case& c) {
  const int64_t draws = c.i64("draws");
  return {static_cast<int32_t>(draws > 0 ? draws : c.i64("batch")),
          static_cast<int32_t>(draws > 0 ? 1 : c.i64("batch")),
          static_cast<int32_t>(c.i64("draft_len")),
          static_cast<int32_t>(c.i64("vocab")),
          draws > 0,
          static_cast<uint32_t>(c.seed),
          static_cast<uint32_t>(c.seed >> 32),
          PhiloxStream(c.seed, kAcceptSite, kDomainDraws).stream_id(),
          PhiloxStream(c.seed, kRaceSite, kDomainDraws).stream_id()};
}

namespace {


class SpeculativeSampling final : public Method {
 public:
  SpeculativeSampling() {
    info_ = {.name = "speculative_sampling",
             .family = "decoding",
             .summary = "chain verification of K draft tokens by modified rejection sampling",
             .catalog_id = "C-SPECSAMP",
             .paper = "Chen et al. 2023, Accelerating Large Language Model Decoding with Speculative Sampling",
             .spec_version = 1,
             .phases = {},
             .dtypes = {DType::f32}};
    schema_.add({"batch", ParamType::Int, Value(int64_t{4}), {}, 1.0, 65536.0, {}, "sequences verified at once"});
    schema_.add({"draft_len", ParamType::Int, Value(int64_t{4}), {}, 1.0, 64.0, {}, "K: draft tokens per sequence"});
    schema_.add({"vocab", ParamType::Int, Value(int64_t{32000}), {}, 2.0, 1048576.0, {}, "V: vocabulary size"});
    schema_.add({"draws", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1e7, {},
                 "distribution mode: this many rows share one (p, q) chain and the tokens are tested (0: off)"});
    schema_.add({"dist", ParamType::String, Value(std::string("zipf")), {}, {}, {},
                 {"zipf", "peaked", "flat", "bimodal", "ties"}, "shape of the target distributions (G-DIST)"});
    schema_.add({"draft", ParamType::String, Value(std::string("perturbed")), {}, {}, {},
                 {"perturbed", "independent", "equal", "disjoint"}, "how the draft distribution q relates to p"});
    add_distribution_rules(schema_, "one chain to every row");
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override { return chain_verify_outputs(speculative_params(c)); }

  TensorMap inputs(const Case& c) const override;
  Reference reference(const Case& c, const TensorMap& in) const override;
  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override;
  Work work(const Case& c) const override;
  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override;

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

TensorMap SpeculativeSampling::inputs(const Case& c) const {
  const SpeculativeParams s = speculative_params(c);
  const int64_t K = s.draft_len, V = s.vocab;
  const DistShape shape = parse_dist_shape(c.str("dist"));
  const DraftRelation rel = parse_draft_relation(c.str("draft"));
  HostTensor target("target_probs", DType::f32, {s.prob_rows, K + 1, V});
  HostTensor draft("draft_probs", DType::f32, {s.prob_rows, K, V});
  harness_pool().parallel_for(s.prob_rows * (K + 1), [&](int64_t begin, int64_t end) {
    for (int64_t slot = begin; slot < end; ++slot) {
      const int64_t pr = slot / (K + 1), t = slot % (K + 1);
      const std::vector<double> p = gdist(shape, "target_probs", c.seed, slot, V,
                                          rel == DraftRelation::disjoint ? disjoint_split(c.seed, slot, V) : std::vector<char>{});
      for (int64_t x = 0; x < V; ++x) target.set(slot * V + x, p[x]);
      if (t == K) continue;
      const std::vector<double> q = draft_for(rel, shape, p, c.seed, slot, V);
      for (int64_t x = 0; x < V; ++x) draft.set((pr * K + t) * V + x, q[x]);
    }
  });
  // Draft tokens x ~ q̄ by inverse CDF over the stored f32 values.
  HostTensor ids("draft_token_ids", DType::i32, {s.rows, K});
  const PhiloxStream pick(c.seed, "draft_token_ids", kDomainInputs);
  harness_pool().parallel_for(s.rows * K, [&](int64_t begin, int64_t end) {
    std::vector<double> q(V);
    for (int64_t n = begin; n < end; ++n) {
      const int64_t r = n / K, t = n % K;
      draft.get_row((prob_row_of(s, r) * K + t) * V, V, q.data());
      const int64_t token = inverse_cdf_token(q, pick.uniform_f64(static_cast<uint64_t>(n)));
      ids.set(n, static_cast<double>(token));
    }
  }, 1024);
  TensorMap in;
  in.emplace("target_probs", std::move(target));
  in.emplace("draft_probs", std::move(draft));
  in.emplace("draft_token_ids", std::move(ids));
  return in;
}

Reference SpeculativeSampling::reference(const Case& c, const TensorMap& in) const {
  return chain_verify_reference(speculative_params(c), c.seed, in, {});
}

CheckReport SpeculativeSampling::check(const Case& c, const TensorMap& in, const Reference& ref,
                                       const TensorMap& got) const {
  const SpeculativeParams s = speculative_params(c);
  if (!s.distribution) return chain_verify_check(s, in, ref, got, {}, {}, nullptr);
  const std::vector<GofResult> tests = position_tests(s, in, got);
  return chain_verify_check(s, in, ref, got, {}, {}, &tests);
}

Work SpeculativeSampling::work(const Case& c) const {
  const SpeculativeParams s = speculative_params(c);
  const double R = static_cast<double>(s.rows), K = static_cast<double>(s.draft_len), V = static_cast<double>(s.vocab);
  Work w;
  // Per row: K ratio tests, and one race over V: weight, two logs, a subtraction and a compare.
  w.flops = R * (2 * K + 6 * V);
  // Draft ids and the gathered p(x), q(x); the race's two weight rows (one shared row pair in
  // distribution mode); the four outputs.
  const double race_rows = s.distribution ? 1.0 : R;
  w.bytes = R * (K * 4 + 2 * K * 4) + race_rows * 2 * V * 4 + R * (K + 1 + 3) * 4;
  w.bound = Bound::compute;
  return w;
}

Json SpeculativeSampling::quality(const Case& c, const TensorMap& in, const TensorMap& out) const {
  const SpeculativeParams s = speculative_params(c);
  const int64_t R = s.rows, K = s.draft_len;
  // Analytic expectations per probability row: α_t = 1 − TV(p̄_t, q̄_t); E[accepted] = Σ_t Π_{s≤t} α_s.
  double expected_accepted = 0, expected_rate = 0, tv_sum = 0;
  for (int64_t pr = 0; pr < s.prob_rows; ++pr) {
    const Chain chain = chain_of(s, in, pr);
    double reach = 1;
    for (int64_t t = 0; t < K; ++t) {
      const double tv = total_variation(normalised(chain.p[t]), normalised(chain.q[t]));
      tv_sum += tv;
      expected_rate += 1.0 - tv;
      reach *= 1.0 - tv;
      expected_accepted += reach;
    }
  }
  expected_accepted /= static_cast<double>(s.prob_rows);  // every chain serves the same number of rows
  expected_rate /= static_cast<double>(s.prob_rows * K);
  double accepted = 0, per_position = 0;
  for (int64_t r = 0; r < R; ++r) {
    accepted += out.at("emitted_draft_token_num").get(r);
    per_position += out.at("accepted_token_num").get(r);
  }
  Json q = Json::object();
  q["mean_accepted_len"] = accepted / static_cast<double>(R);
  q["expected_accepted_len"] = expected_accepted;
  q["mean_emitted"] = accepted / static_cast<double>(R) + 1.0;
  q["acceptance_rate"] = per_position / static_cast<double>(R * K);
  q["expected_acceptance_rate"] = expected_rate;
  q["mean_tv_pq"] = tv_sum / static_cast<double>(s.prob_rows * K);
  if (s.distribution) {
    const OutputCheck st = check_stat(outputs(c).front(), position_tests(s, in, out));
    q["stat_p_value"] = st.metrics["p_value"];
    q["stat_alpha"] = kStatAlpha;
  }
  return q;
}

}  // namespace
}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::SpeculativeSampling);
