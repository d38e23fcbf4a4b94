// speculative_sampling's spec: a hand-computed chain, the rejection-sampling theorem on G-DIST
// pairs, the STAT test with its power twins (wrong samplers it must reject at the suite's n and α),
// and the SEMI check's negative tests.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include "attnbench/caseid.h"
#include "attnbench/check_semi.h"
#include "attnbench/check_stat.h"
#include "attnbench/method.h"
#include "attnbench/rng.h"
#include "reference/decoding/speculative_sampling_common.h"
#include "reference/decoding/speculative_sampling_stat.h"
#include "support.h"

using namespace attnbench;
using namespace attnbench::decoding;

namespace {

// The distribution-mode case of suites/smoke.json and suites/ci.json.
constexpr const char* kStatCase = "speculative_sampling/batch=1,draft_len=3,vocab=16,draws=40000,dist=zipf,draft=perturbed/f32/s1";

// The spec's race in fp64 over weights w (no normalisation), uniforms from element `first` on.
int64_t race_fp64(uint64_t seed, uint64_t first, const std::vector<double>& w) {
  const PhiloxStream draws(seed, kRaceSite, kDomainDraws);
  double best = -INFINITY;
  int64_t token = -1;
  for (size_t x = 0; x < w.size(); ++x) {
    if (w[x] <= 0) continue;
    const double key = std::log(w[x]) - std::log(-std::log(static_cast<double>(draws.uniform_f32(first + x))));
    if (token < 0 || key > best) {
      best = key;
      token = static_cast<int64_t>(x);
    }
  }
  return token;
}

// Samplers: the spec's, and the wrong ones the STAT test must reject (docs/design.md "Checks").
enum class SpecSampler { correct, ignore_q, residual_q_minus_p, bonus_from_last_draft, continue_after_reject };
const char* name_of(SpecSampler s) {
  switch (s) {
    case SpecSampler::correct: return "correct";
    case SpecSampler::ignore_q: return "accept on u < p(x), ignoring q";
    case SpecSampler::residual_q_minus_p: return "resample from max(0, q - p)";
    case SpecSampler::bonus_from_last_draft: return "bonus from the last draft position's p";
    case SpecSampler::continue_after_reject: return "continue after a rejection";
  }
  return "?";
}

std::vector<double> residual(SpecSampler s, const std::vector<double>& p, const std::vector<double>& q) {
  std::vector<double> r(p.size());
  bool any = false;
  for (size_t x = 0; x < p.size(); ++x)
    any |= (r[x] = std::max(0.0, s == SpecSampler::residual_q_minus_p ? q[x] - p[x] : p[x] - q[x])) > 0;
  return any ? r : p;
}

double accept_chance(SpecSampler s, double p, double q) {
  if (s == SpecSampler::ignore_q) return std::min(1.0, p);
  return q > 0 ? std::min(1.0, p / q) : (p > 0 ? 1.0 : 0.0);
}

// Outputs of a sampler on a case's inputs, drawing the spec's own uniforms.
TensorMap simulate(const Case& c, const TensorMap& in, SpecSampler sampler) {
  const SpeculativeParams s = speculative_params(c);
  const int64_t R = s.rows, K = s.draft_len;
  TensorMap out;
  HostTensor tokens("tokens", DType::i32, {R, K + 1}), emitted("emitted", DType::i32, {R});
  HostTensor acc("accepted_token_num", DType::i32, {R}), edt("emitted_draft_token_num", DType::i32, {R});
  tokens.fill(-1);
  const PhiloxStream accept(c.seed, kAcceptSite, kDomainDraws);
  for (int64_t r = 0; r < R; ++r) {
    const Chain ch = chain_of(s, in, prob_row_of(s, r));
    int64_t n = 0, accepted = 0, drafts = 0;
    bool stopped = false;
    for (int64_t t = 0; t < K; ++t) {
      const auto x = static_cast<int64_t>(in.at("draft_token_ids").get(r * K + t));
      const double u = accept.uniform_f32(accept_index(s, r, t));
      const bool ok = sampler == SpecSampler::ignore_q ? u < ch.p[t][x] : u * ch.q[t][x] < ch.p[t][x];
      accepted += ok;
      if (stopped) continue;
      if (ok) {
        tokens.set(r * (K + 1) + n++, static_cast<double>(x));
        ++drafts;
        continue;
      }
      tokens.set(r * (K + 1) + n++, static_cast<double>(race_fp64(c.seed, race_index(s, r, t, 0), residual(sampler, ch.p[t], ch.q[t]))));
      stopped = sampler != SpecSampler::continue_after_reject;
    }
    if (!stopped) {
      const std::vector<double>& bonus = sampler == SpecSampler::bonus_from_last_draft ? ch.p[K - 1] : ch.p[K];
      tokens.set(r * (K + 1) + n++, static_cast<double>(race_fp64(c.seed, race_index(s, r, K, 0), bonus)));
    }
    emitted.set(r, static_cast<double>(n));
    edt.set(r, static_cast<double>(n - 1));
    acc.set(r, static_cast<double>(accepted));
  }
  for (HostTensor* t : {&tokens, &emitted, &acc, &edt}) out.emplace(t->name(), std::move(*t));
  return out;
}

// The exact cells (tokens at t, then "nothing at t") a sampler produces, per position.
std::vector<std::vector<double>> sampler_cells(const Chain& ch, SpecSampler sampler) {
  const auto K = static_cast<int64_t>(ch.q.size());
  const size_t V = ch.p[0].size();
  std::vector<std::vector<double>> cells;
  double reach = 1;
  for (int64_t t = 0; t <= K; ++t) {
    std::vector<double> c(V + 1, 0.0);
    if (t < K) {
      const std::vector<double> qn = normalised(ch.q[t]), rn = normalised(residual(sampler, ch.p[t], ch.q[t]));
      double alpha = 0;
      for (size_t x = 0; x < V; ++x) alpha += qn[x] * accept_chance(sampler, ch.p[t][x], ch.q[t][x]);
      for (size_t x = 0; x < V; ++x) c[x] = reach * (qn[x] * accept_chance(sampler, ch.p[t][x], ch.q[t][x]) + (1 - alpha) * rn[x]);
      c[V] = 1 - reach;
      if (sampler != SpecSampler::continue_after_reject) reach *= alpha;
    } else {
      const std::vector<double> pn = normalised(sampler == SpecSampler::bonus_from_last_draft ? ch.p[K - 1] : ch.p[K]);
      for (size_t x = 0; x < V; ++x) c[x] = reach * pn[x];
      c[V] = 1 - reach;
    }
    cells.push_back(std::move(c));
  }
  return cells;
}

HostTensor f32(const char* name, Shape shape, std::vector<double> v) {
  HostTensor t(name, DType::f32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

}  // namespace

TEST_CASE("speculative_sampling: a hand-computed chain of one draft over two tokens", "[unit]") {
  // p_0 = [0.25, 0.75], q_0 = [0.5, 0.5], p_1 = [0.1, 0.9]. Row 0 drafts token 0 (p/q = 0.5: accepted
  // iff u < 0.5, else the residual [0, 0.25] emits token 1); row 1 drafts token 1 (p/q = 1.5: always
  // accepted). An accepted draft is followed by the bonus race over p_1.
  bool saw_accept = false, saw_reject = false;
  for (uint64_t seed = 1; seed <= 40 && !(saw_accept && saw_reject); ++seed) {
    const Case c = test::case_from_id("speculative_sampling/batch=2,draft_len=1,vocab=2/f32/s" + std::to_string(seed));
    TensorMap in;
    in.emplace("target_probs", f32("target_probs", {2, 2, 2}, {0.25, 0.75, 0.1, 0.9, 0.25, 0.75, 0.1, 0.9}));
    in.emplace("draft_probs", f32("draft_probs", {2, 1, 2}, {0.5, 0.5, 0.5, 0.5}));
    HostTensor ids("draft_token_ids", DType::i32, {2, 1});
    ids.set(0, 0);
    ids.set(1, 1);
    in.emplace("draft_token_ids", std::move(ids));
    const Reference ref = c.method->reference(c, in);
    const HostTensor &tok = ref.tensors.at("tokens"), &acc = ref.tensors.at("accepted_token_num");
    const auto bonus = [&](int64_t row) {
      double best = -INFINITY;
      int64_t win = 0;
      for (int64_t x = 0; x < 2; ++x) {
        const double u = method_uniform(seed, "spec.race", (row * 2 + 1) * 2 + x);
        const double key = std::log(x ? 0.9f : 0.1f) - std::log(-std::log(u));
        if (key > best) best = key, win = x;
      }
      return static_cast<double>(win);
    };
    const bool accepted = method_uniform(seed, "spec.accept", 0) < 0.5;
    saw_accept |= accepted;
    saw_reject |= !accepted;
    INFO("seed " << seed << (accepted ? ": row 0 accepted" : ": row 0 rejected"));
    if (accepted) {
      CHECK(tok.get(0) == 0);
      CHECK(tok.get(1) == bonus(0));
      CHECK(ref.tensors.at("emitted").get(0) == 2);
    } else {
      CHECK(tok.get(0) == 1);
      CHECK(tok.get(1) == -1);
      CHECK(ref.tensors.at("emitted").get(0) == 1);
    }
    CHECK(acc.get(0) == (accepted ? 1 : 0));
    CHECK(tok.get(2) == 1);
    CHECK(tok.get(3) == bonus(1));
    CHECK(acc.get(1) == 1);
    CHECK(ref.tensors.at("emitted_draft_token_num").get(1) == 1);
  }
  CHECK(saw_accept);
  CHECK(saw_reject);
}

TEST_CASE("speculative_sampling: every G-DIST pair emits p at every position (rejection sampling theorem)", "[unit]") {
  for (const char* dist : {"zipf", "peaked", "flat", "bimodal", "ties"})
    for (const char* draft : {"perturbed", "independent", "equal", "disjoint"}) {
      const Case c = test::case_from_id(std::string("speculative_sampling/batch=3,draft_len=2,vocab=12,dist=") + dist +
                                        ",draft=" + draft + "/f32/s4");
      INFO(c.id());
      const SpeculativeParams s = speculative_params(c);
      const TensorMap in = c.method->inputs(c);
      for (int64_t pr = 0; pr < 3; ++pr) {
        const Chain ch = chain_of(s, in, pr);
        const auto cells = emitted_cells(ch);
        const auto mine = sampler_cells(ch, SpecSampler::correct);
        for (size_t t = 0; t < cells.size(); ++t)
          for (size_t x = 0; x < cells[t].size(); ++x) CHECK(cells[t][x] == Approx(mine[t][x]).margin(1e-14));
        double reach = 1;
        for (int64_t t = 0; t <= 2; ++t) {
          const std::vector<double> pn = normalised(ch.p[t]);
          double total = 0;
          for (size_t x = 0; x < 12; ++x) {
            CHECK(cells[t][x] == Approx(reach * pn[x]).margin(1e-6));
            total += cells[t][x];
          }
          CHECK(total + cells[t][12] == Approx(1.0).margin(1e-12));
          if (t < 2) {
            const double alpha = acceptance_probability(ch, t);
            CHECK(alpha == Approx(1.0 - total_variation(pn, normalised(ch.q[t]))).margin(1e-6));
            if (std::string(draft) == "equal") CHECK(alpha == Approx(1.0).margin(1e-12));
            if (std::string(draft) == "disjoint") CHECK(alpha == 0.0);
            reach *= alpha;
          }
        }
      }
    }
}

TEST_CASE("speculative_sampling: the reference passes its own STAT test", "[unit]") {
  const Case c = test::case_from_id(kStatCase);
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const CheckReport report = c.method->check(c, in, ref, test::reference_as_outputs(c, ref));
  INFO(report.first_failure());
  CHECK(report.pass());
  const Json q = c.method->quality(c, in, test::reference_as_outputs(c, ref));
  CHECK(q["stat_p_value"].get<double>() >= kStatAlpha);
  // The sample's accepted length is within 5 standard errors of 1 − TV's expectation.
  CHECK(q["mean_accepted_len"].get<double>() == Approx(q["expected_accepted_len"].get<double>()).margin(5 * 1.2 / std::sqrt(40000.0)));
}

TEST_CASE("speculative_sampling: power twins are rejected at the suite's n and alpha", "[unit]") {
  const Case c = test::case_from_id(kStatCase);
  const SpeculativeParams s = speculative_params(c);
  const TensorMap in = c.method->inputs(c);
  const Chain ch = chain_of(s, in, 0);
  const auto correct = sampler_cells(ch, SpecSampler::correct);
  const double n = static_cast<double>(s.rows), per_test_alpha = kStatAlpha / static_cast<double>(s.draft_len + 1);
  for (int64_t t = 0; t < s.draft_len; ++t)
    std::printf("  TV(p_%lld, q_%lld) = %.3f\n", static_cast<long long>(t), static_cast<long long>(t),
                total_variation(normalised(ch.p[t]), normalised(ch.q[t])));
  for (SpecSampler twin : {SpecSampler::ignore_q, SpecSampler::residual_q_minus_p, SpecSampler::bonus_from_last_draft, SpecSampler::continue_after_reject}) {
    INFO(name_of(twin));
    // Analytic power (noncentral chi-square) of the best single position, each tested at α/(K+1):
    // the Bonferroni combination rejects at least as often.
    const auto alt = sampler_cells(ch, twin);
    double power = 0, tv = 0;
    int64_t where = 0;
    for (size_t t = 0; t < alt.size(); ++t) {
      const double pw = chi_square_power(correct[t], alt[t], n, per_test_alpha);
      if (pw > power) power = pw, where = static_cast<int64_t>(t), tv = total_variation(correct[t], alt[t]);
    }
    // The smallest n at which that position alone reaches power 0.99, for the record.
    double lo = 1, hi = n;
    while (hi - lo > 1) {
      const double mid = std::floor((lo + hi) / 2);
      (chi_square_power(correct[where], alt[where], mid, per_test_alpha) >= 0.99 ? hi : lo) = mid;
    }
    std::printf("  twin \"%s\": TV to the correct cells %.4f at position %lld, power %.6f at n = %.0f (0.99 from n = %.0f)\n",
                name_of(twin), tv, static_cast<long long>(where), power, n, hi);
    CHECK(power >= 0.99);
    // And the STAT check really rejects it.
    const OutputDecl d = c.method->outputs(c).front();
    const OutputCheck st = check_stat(d, position_tests(s, in, simulate(c, in, twin)));
    CHECK_FALSE(st.pass);
  }
  // The correct sampler, simulated the same way, is the reference and passes.
  const TensorMap right = simulate(c, in, SpecSampler::correct);
  CHECK(check_stat(c.method->outputs(c).front(), position_tests(s, in, right)).pass);
}

TEST_CASE("speculative_sampling: SEMI fails decisions changed away from boundary events", "[unit]") {
  const Case c = test::case_from_id("speculative_sampling/batch=64,draft_len=4,vocab=300/f32/s3");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const TensorMap good = test::reference_as_outputs(c, ref);
  REQUIRE(c.method->check(c, in, ref, good).pass());
  // A row that stops early: emit the draft anyway (flip a clear rejection into an acceptance).
  int64_t row = -1;
  for (int64_t r = 0; r < 64 && row < 0; ++r)
    if (ref.tensors.at("emitted").get(r) == 1 && std::fabs(ref.tensors.at("accept_margin").get(r * 4)) > 1e-3 &&
        !race_is_boundary(ref.tensors.at("race_gap").get(r * 5)))
      row = r;
  REQUIRE(row >= 0);
  TensorMap bad = test::reference_as_outputs(c, ref);
  bad.at("tokens").set(row * 5, in.at("draft_token_ids").get(row * 4));
  bad.at("tokens").set(row * 5 + 1, ref.tensors.at("race_token").get(row * 5 + 1));
  bad.at("emitted").set(row, 2);
  bad.at("emitted_draft_token_num").set(row, 1);
  CHECK_FALSE(c.method->check(c, in, ref, bad).pass());
  // The race at the stop position picks a different token (a wrong race, not a boundary).
  TensorMap wrong_race = test::reference_as_outputs(c, ref);
  const double t0 = wrong_race.at("tokens").get(row * 5);
  wrong_race.at("tokens").set(row * 5, t0 == 0 ? 1 : t0 - 1);
  const CheckReport r = c.method->check(c, in, ref, wrong_race);
  CHECK_FALSE(r.pass());
  CHECK_THAT(r.first_failure(), Catch::StartsWith("tokens:"));
}

TEST_CASE("speculative_sampling: a sampler that ignores the boundary rule is caught", "[unit]") {
  // Accepting on u < bf16(p/q) changes decisions whose margin is far outside the 2ε boundary band
  // (up to 2^-9 relative): over the distribution case's 120000 tests some such decision occurs.
  const Case c = test::case_from_id(kStatCase);
  const SpeculativeParams s = speculative_params(c);
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  TensorMap coarse = test::reference_as_outputs(c, ref);
  const PhiloxStream accept(c.seed, kAcceptSite, kDomainDraws);
  int64_t changed = 0;
  for (int64_t r = 0; r < s.rows; ++r) {
    const Chain ch = chain_of(s, in, 0);
    int64_t n = 0;
    for (int64_t t = 0; t <= s.draft_len; ++t) {
      if (t == s.draft_len) {
        coarse.at("tokens").set(r * 4 + n++, static_cast<double>(race_fp64(c.seed, race_index(s, r, t, 0), ch.p[t])));
        break;
      }
      const auto x = static_cast<int64_t>(in.at("draft_token_ids").get(r * 3 + t));
      const double u = accept.uniform_f32(accept_index(s, r, t));
      const bool ok = u < round_to(DType::bf16, ch.p[t][x] / ch.q[t][x]);
      changed += ok != (ref.tensors.at("accept_each").get(r * 3 + t) != 0);
      if (ok) {
        coarse.at("tokens").set(r * 4 + n++, static_cast<double>(x));
        continue;
      }
      coarse.at("tokens").set(r * 4 + n++, static_cast<double>(race_fp64(c.seed, race_index(s, r, t, 0), residual(SpecSampler::correct, ch.p[t], ch.q[t]))));
      break;
    }
    for (int64_t t = n; t < 4; ++t) coarse.at("tokens").set(r * 4 + t, -1);
    coarse.at("emitted").set(r, static_cast<double>(n));
    coarse.at("emitted_draft_token_num").set(r, static_cast<double>(n - 1));
  }
  INFO(changed << " decisions differ from the reference's");
  REQUIRE(changed > 0);
  const CheckReport report = c.method->check(c, in, ref, coarse);
  CHECK_FALSE(report.pass());
}

TEST_CASE("speculative_sampling: a decision flipped at a planted boundary event passes and is counted", "[unit]") {
  const Case c = test::case_from_id("speculative_sampling/batch=4,draft_len=3,vocab=50/f32/s8");
  TensorMap in = c.method->inputs(c);
  // Plant p_0(x) = u·q_0(x) (rounded to f32) for row 0's first draft: the acceptance test sits on
  // its boundary.
  const auto x = static_cast<int64_t>(in.at("draft_token_ids").get(0));
  const double u = method_uniform(c.seed, kAcceptSite, 0);
  in.at("target_probs").set(x, u * in.at("draft_probs").get(x));
  const Reference ref = c.method->reference(c, in);
  REQUIRE(accept_is_boundary(ref.tensors.at("accept_margin").get(0)));
  // The opposite decision: flip row 0's first test, and follow it through.
  TensorMap flipped = test::reference_as_outputs(c, ref);
  const bool ref_accepted = ref.tensors.at("accept_each").get(0) != 0;
  HostTensor& tok = flipped.at("tokens");
  for (int64_t t = 0; t < 4; ++t) tok.set(t, -1);
  if (ref_accepted) {
    tok.set(0, ref.tensors.at("race_token").get(0));
    flipped.at("emitted").set(0, 1);
    flipped.at("emitted_draft_token_num").set(0, 0);
  } else {
    tok.set(0, static_cast<double>(x));
    tok.set(1, ref.tensors.at("race_token").get(1));  // any token: the rest is excluded
    flipped.at("emitted").set(0, 2);
    flipped.at("emitted_draft_token_num").set(0, 1);
  }
  flipped.at("accepted_token_num").set(0, ref.tensors.at("accepted_token_num").get(0) + (ref_accepted ? -1 : 1));
  const CheckReport report = c.method->check(c, in, ref, flipped);
  INFO(report.first_failure());
  CHECK(report.pass());
  for (const auto& o : report.outputs)
    if (o.output == "tokens") CHECK(o.metrics["n_boundary_cases"] == 1);
}
