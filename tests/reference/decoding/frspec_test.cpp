// frspec's spec: the frequency-ranked subset, greedy decoding equal to the target's greedy tokens
// with the draft equal to the full head's wherever its argmax is in the subset, the reference
// passing its own STAT test, the power twin that verifies against the full head's q while drafting
// from the subset, and negative tests of every check.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnbench/check_stat.h"
#include "attnbench/registry.h"
#include "method_cases.h"
#include "reference/decoding/frspec_common.h"
#include "reference/decoding/speculative_sampling_common.h"
#include "reference/decoding/speculative_sampling_stat.h"
#include "support.h"

using namespace attnbench;
using namespace attnbench::decoding;

namespace {

// A small subset, so that some of the full head's greedy drafts fall outside it.
constexpr const char* kGreedyCase = "frspec/batch=4,draft_len=4,vocab=2000,subset=20,hidden=72,temperature=0/bf16/s4";
// The distribution-mode case of suites/smoke.json and suites/ci.json.
constexpr const char* kFrspecStatCase = "frspec/batch=1,draft_len=3,vocab=64,subset=16,hidden=32,draws=1000/f32/s7";

// The full head's fp64 logits of hidden row h.
std::vector<double> full_logits(const TensorMap& in, int64_t h) {
  const HostTensor &head = in.at("lm_head"), &hidden = in.at("hidden");
  const int64_t V = head.shape()[0], D = head.shape()[1];
  std::vector<double> z(static_cast<size_t>(V), 0.0);
  for (int64_t x = 0; x < V; ++x)
    for (int64_t d = 0; d < D; ++d) z[x] += head.get(x * D + d) * hidden.get(h * D + d);
  return z;
}

std::vector<double> softmax(const std::vector<double>& z) {
  const double m = *std::max_element(z.begin(), z.end());
  std::vector<double> q(z.size());
  double total = 0;
  for (size_t x = 0; x < z.size(); ++x) total += q[x] = std::exp(z[x] - m);
  for (double& v : q) v /= total;
  return q;
}

// The verification's inputs with draft distribution q [K][V] (0 outside the subset for frspec's).
TensorMap chain_inputs(const TensorMap& in, const std::vector<std::vector<double>>& q, const HostTensor& ids) {
  const auto K = static_cast<int64_t>(q.size()), V = static_cast<int64_t>(q[0].size());
  HostTensor probs("draft_probs", DType::f64, {1, K, V});
  for (int64_t t = 0; t < K; ++t)
    for (int64_t x = 0; x < V; ++x) probs.set(t * V + x, q[t][x]);
  TensorMap v;
  v.emplace("target_probs", in.at("target_probs").clone());
  v.emplace("draft_probs", std::move(probs));
  v.emplace("draft_token_ids", ids.clone());
  return v;
}

}  // namespace

TEST_CASE("frspec: the subset is the most frequent tokens, in rank order", "[unit]") {
  const Case c = test::case_from_id(kGreedyCase);
  const TensorMap in = c.method->inputs(c);
  const HostTensor &subset = in.at("subset_ids"), &head = in.at("lm_head");
  const int64_t V = c.i64("vocab"), Vs = c.i64("subset"), D = c.i64("hidden");
  std::vector<char> in_subset(static_cast<size_t>(V), 0);
  double lowest = INFINITY;
  for (int64_t j = 0; j < Vs; ++j) {
    const auto x = static_cast<int64_t>(subset.get(j));
    in_subset[x] = 1;
    if (j > 0) CHECK(head.get(x * D) <= head.get(static_cast<int64_t>(subset.get(j - 1)) * D));  // the prior falls with rank
    lowest = std::min(lowest, head.get(x * D));
  }
  for (int64_t x = 0; x < V; ++x)
    if (!in_subset[x]) CHECK(head.get(x * D) <= lowest);
}

TEST_CASE("frspec: greedy emits the target's greedy tokens, the draft the full head's argmax where it is in the subset",
          "[unit]") {
  const Case c = test::case_from_id(kGreedyCase);
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const int64_t B = c.i64("batch"), K = c.i64("draft_len"), V = c.i64("vocab"), Vs = c.i64("subset");
  const HostTensor &target = in.at("target_probs"), &subset = in.at("subset_ids"), &tokens = ref.tensors.at("tokens"),
                   &ids = ref.tensors.at("draft_token_ids");
  std::vector<char> in_subset(static_cast<size_t>(V), 0);
  for (int64_t j = 0; j < Vs; ++j) in_subset[static_cast<int64_t>(subset.get(j))] = 1;
  int64_t in_s = 0, accepted = 0;
  for (int64_t r = 0; r < B; ++r) {
    const auto emitted = static_cast<int64_t>(ref.tensors.at("emitted").get(r));
    accepted += emitted - 1;
    for (int64_t t = 0; t < emitted; ++t) {
      int64_t best = 0;
      for (int64_t x = 1; x < V; ++x)
        if (target.get((r * (K + 1) + t) * V + x) > target.get((r * (K + 1) + t) * V + best)) best = x;
      CHECK(tokens.get(r * (K + 1) + t) == best);
    }
    for (int64_t t = 0; t < K; ++t) {
      const std::vector<double> z = full_logits(in, r * K + t);
      const int64_t full = std::max_element(z.begin(), z.end()) - z.begin();
      if (!in_subset[full]) continue;
      ++in_s;
      CHECK(ids.get(r * K + t) == full);
    }
  }
  CHECK(in_s > 0);
  CHECK(in_s < B * K);
  CHECK(accepted > 0);
  std::printf("  greedy: %lld of %lld full-head drafts in the subset, %lld drafts accepted\n", static_cast<long long>(in_s),
              static_cast<long long>(B * K), static_cast<long long>(accepted));
}

TEST_CASE("frspec: the reference passes its own checks, STAT included", "[unit]") {
  for (const std::string& id : test::kFrspecCases) {
    INFO(id);
    const Case c = test::case_from_id(id);
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    const TensorMap out = test::reference_as_outputs(c, ref);
    const CheckReport report = c.method->check(c, in, ref, out);
    INFO(report.first_failure());
    CHECK(report.pass());
    const Json q = c.method->quality(c, in, out);
    // The subset's draft is renormalised on S, so its overlap with p may be larger or smaller.
    CHECK(q["expected_acceptance_rate"].get<double>() >= 0);
    CHECK(q["expected_acceptance_rate_full_vocab"].get<double>() <= 1 + 1e-12);
    if (c.i64("draws") > 0) CHECK(q["stat_p_value"].get<double>() >= kStatAlpha);
  }
}

TEST_CASE("frspec: the twin that verifies against the full head's q is rejected at the suite's n", "[unit]") {
  const Case c = test::case_from_id(kFrspecStatCase);
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const int64_t K = c.i64("draft_len"), V = c.i64("vocab"), Vs = c.i64("subset"), n = c.i64("draws");
  const HostTensor& subset = in.at("subset_ids");
  // Right: q on the subset (the drafts' law). Twin: the full head's q in the acceptance test and
  // the residual, while the drafts still come from the subset.
  std::vector<std::vector<double>> right(K, std::vector<double>(V, 0.0)), full(K);
  for (int64_t t = 0; t < K; ++t) {
    for (int64_t j = 0; j < Vs; ++j) right[t][static_cast<int64_t>(subset.get(j))] = ref.tensors.at("draft_probs").get(t * Vs + j);
    full[t] = softmax(full_logits(in, t));
  }
  const HostTensor& ids = ref.tensors.at("draft_token_ids");
  const Case vc = frspec_verification_case(c);
  const SpeculativeParams s = speculative_params(vc);
  const TensorMap vin = chain_inputs(in, right, ids), twin_in = chain_inputs(in, full, ids);
  // The twin's exact cells: drafts from q_S, accepted with min(1, p/q_F), else from max(0, p − q_F).
  const Chain ch = chain_of(s, vin, 0), twin_ch = chain_of(s, twin_in, 0);
  const auto correct = emitted_cells(ch);
  double reach = 1, best = 0;
  for (int64_t t = 0; t <= K; ++t) {
    std::vector<double> cells(static_cast<size_t>(V + 1), 0.0);
    const std::vector<double>& p = ch.p[t];
    if (t < K) {
      const std::vector<double> qs = normalised(ch.q[t]);
      std::vector<double> res(static_cast<size_t>(V));
      double alpha = 0, mass = 0;
      for (int64_t x = 0; x < V; ++x) {
        const double qf = twin_ch.q[t][x];
        alpha += qs[x] * (qf > 0 ? std::min(1.0, p[x] / qf) : 1.0);
        mass += res[x] = std::max(0.0, p[x] - qf);
      }
      for (int64_t x = 0; x < V; ++x)
        cells[x] = reach * (qs[x] * (twin_ch.q[t][x] > 0 ? std::min(1.0, p[x] / twin_ch.q[t][x]) : 1.0) + (1 - alpha) * res[x] / mass);
      cells[V] = 1 - reach;
      reach *= alpha;
    } else {
      for (int64_t x = 0; x < V; ++x) cells[x] = reach * p[x];
      cells[V] = 1 - reach;
    }
    const double per_test_alpha = kStatAlpha / static_cast<double>(K + 1);
    const double power = chi_square_power(correct[t], cells, static_cast<double>(n), per_test_alpha);
    double lo = 1, hi = static_cast<double>(n);  // the smallest n at which this position reaches 0.99
    while (hi - lo > 1) {
      const double mid = std::floor((lo + hi) / 2);
      (chi_square_power(correct[t], cells, mid, per_test_alpha) >= 0.99 ? hi : lo) = mid;
    }
    std::printf("  frspec twin \"verify against the full head's q\" at position %lld: TV %.4f, power %.6f at n = %lld (0.99 from n = %.0f)\n",
                static_cast<long long>(t), total_variation(correct[t], cells), power, static_cast<long long>(n), hi);
    best = std::max(best, power);
  }
  CHECK(best >= 0.99);
  // Run it: the same drafts and draws through the twin's chain, and the STAT test rejects its tokens.
  const Reference twin = vc.method->reference(vc, twin_in);
  const OutputDecl d = vc.method->outputs(vc).front();
  CHECK_FALSE(check_stat(d, position_tests(s, vin, twin.tensors)).pass);
  CHECK(check_stat(d, position_tests(s, vin, ref.tensors)).pass);
}

TEST_CASE("frspec: the checks reject wrong logits, q, drafts and chains", "[unit]") {
  for (const char* id : {"frspec/batch=4,draft_len=4,vocab=2000,subset=300,hidden=72,temperature=0/bf16/s4",
                         "frspec/batch=2,draft_len=5,vocab=1500,subset=777,hidden=16,temperature=0.3/f32/s5"}) {
    INFO(id);
    const Case c = test::case_from_id(id);
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    const int64_t K = c.i64("draft_len"), Vs = c.i64("subset");
    const auto fails = [&](const TensorMap& got, const std::string& output) {
      const CheckReport r = c.method->check(c, in, ref, got);
      for (const OutputCheck& o : r.outputs)
        if (o.output == output) return !o.pass;
      FAIL("no output " << output);
      return false;
    };
    {  // a logit off by a little more than the gate allows
      TensorMap got = test::reference_as_outputs(c, ref);
      HostTensor& z = got.at("draft_logits");
      z.set(7, z.get(7) + 1e-3 * std::max(1.0, std::fabs(z.get(7))));
      CHECK(fails(got, "draft_logits"));
    }
    {  // q renormalised wrongly (greedy: not one-hot at the first maximum)
      TensorMap got = test::reference_as_outputs(c, ref);
      HostTensor& q = got.at("draft_probs");
      if (c.f64("temperature") == 0) q.set(Vs + (static_cast<int64_t>(q.get(Vs)) == 1 ? 1 : 0), 0.5);
      else for (int64_t j = 0; j < Vs; ++j) q.set(j, q.get(j) * 1.01);
      CHECK(fails(got, "draft_probs"));
    }
    {  // a draft outside the subset
      TensorMap got = test::reference_as_outputs(c, ref);
      std::vector<char> in_subset(static_cast<size_t>(c.i64("vocab")), 0);
      for (int64_t j = 0; j < Vs; ++j) in_subset[static_cast<int64_t>(in.at("subset_ids").get(j))] = 1;
      int64_t outside = 0;
      while (in_subset[outside]) ++outside;
      got.at("draft_token_ids").set(1, static_cast<double>(outside));
      CHECK(fails(got, "draft_token_ids"));
    }
    {  // the drafts of row 0 moved one position along (a different, still in-subset draft)
      TensorMap got = test::reference_as_outputs(c, ref);
      HostTensor& ids = got.at("draft_token_ids");
      bool changed = false;
      for (int64_t t = 0; t + 1 < K && !changed; ++t)
        if (ids.get(t) != ids.get(t + 1)) {
          const double a = ids.get(t);
          ids.set(t, ids.get(t + 1));
          ids.set(t + 1, a);
          changed = true;
        }
      if (changed) CHECK(fails(got, "draft_token_ids"));
    }
    {  // the chain's emitted token changed
      TensorMap got = test::reference_as_outputs(c, ref);
      const auto e = static_cast<int64_t>(got.at("emitted").get(0));
      HostTensor& tokens = got.at("tokens");
      const int64_t at = e - 1;
      tokens.set(at, std::fmod(tokens.get(at) + 1, static_cast<double>(c.i64("vocab"))));
      CHECK(fails(got, "tokens"));
    }
  }
}
