// gumbel_topk's reference (reference/decoding/gumbel_topk.cpp): the law of a k-set drawn without
// replacement by hand; its first token is sampling's race winner for the same case and seed; the
// check's negative tests (a repeat, a gap, a token not kept, a swap the keys do not allow); and the
// STAT mode's power twin, the sampler that draws k tokens with replacement and redraws the whole
// tuple on a repeat (P(S) ∝ Π p), rejected at the suite's n and α.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <numeric>

#include "attnbench/check_stat.h"
#include "attnbench/rng.h"
#include "reference/decoding/gumbel_topk.h"
#include "reference/decoding/sampler.h"
#include "sampler_tests.h"

using namespace attnbench;
using namespace attnbench::decoding;

TEST_CASE("gumbel_topk: the k-set law of sampling without replacement, by hand", "[unit]") {
  // p = 0.5, 0.3, 0.2, k = 2: P({a, b}) = p_a p_b / (1 − p_a) + p_b p_a / (1 − p_b); colex ranks
  // {0,1} → 0, {0,2} → 1, {1,2} → 2.
  const std::vector<double> q = k_set_probabilities({0.5, 0.3, 0.2}, 2);
  REQUIRE(q.size() == 3);
  CHECK(q[0] == Approx(0.3 + 0.15 / 0.7));
  CHECK(q[1] == Approx(0.2 + 0.1 / 0.8));
  CHECK(q[2] == Approx(0.06 / 0.7 + 0.06 / 0.8));
  CHECK(k_set_rank({0, 1}) == 0);
  CHECK(k_set_rank({0, 2}) == 1);
  CHECK(k_set_rank({1, 2}) == 2);
  // k = 1 is p itself; every k sums to 1; k = n is the one set.
  const std::vector<double> p = {0.4, 0.25, 0.15, 0.1, 0.06, 0.04};
  CHECK(k_set_probabilities(p, 1) == std::vector<double>(p));
  for (int64_t k = 1; k <= 6; ++k) {
    const std::vector<double> all = k_set_probabilities(p, k);
    CHECK(std::accumulate(all.begin(), all.end(), 0.0) == Approx(1.0).epsilon(1e-12));
  }
  CHECK(k_set_probabilities(p, 6).size() == 1);
}

TEST_CASE("gumbel_topk: its first token is sampling's race winner, the rest distinct and ordered by key", "[unit]") {
  const std::string shape = "batch=16,vocab=2000,temperature=0.9,top_p=0.95";
  const Case g = test::method_case("gumbel_topk", shape + ",samples=8"), s = test::method_case("sampling", shape);
  const TensorMap in = g.method->inputs(g);
  const Reference rg = g.method->reference(g, in), rs = s.method->reference(s, s.method->inputs(s));
  for (int64_t r = 0; r < 16; ++r) {
    CHECK(rg.tensors.at("tokens").get(r * 8) == rs.tensors.at("token").get(r));
    std::set<double> distinct;
    for (int64_t i = 0; i < 8; ++i) distinct.insert(rg.tensors.at("tokens").get(r * 8 + i));
    CHECK(distinct.size() == 8);
  }
  // Fewer kept tokens than samples: all of them, then −1.
  const Case few = test::method_case("gumbel_topk", "batch=2,vocab=50,top_k=3,samples=5");
  const Reference rf = few.method->reference(few, few.method->inputs(few));
  CHECK(rf.tensors.at("tokens").get(2) >= 0);
  CHECK(rf.tensors.at("tokens").get(3) == -1);
  CHECK(rf.tensors.at("tokens").get(4) == -1);
}

TEST_CASE("gumbel_topk check: a repeat, a gap, a token not kept and a swap the keys do not allow all fail", "[unit]") {
  const Case c = test::method_case("gumbel_topk", "batch=4,vocab=500,top_k=40,samples=6");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const auto fails = [&](const std::function<void(HostTensor&)>& edit) {
    TensorMap got = test::reference_as_outputs(c, ref);
    edit(got.at("tokens"));
    return !c.method->check(c, in, ref, got).pass();
  };
  CHECK_FALSE(fails([](HostTensor&) {}));
  CHECK(fails([](HostTensor& t) { t.set(1, t.get(0)); }));     // the first token twice
  CHECK(fails([](HostTensor& t) { t.set(3, -1.0); }));         // −1 before the kept count
  CHECK(fails([](HostTensor& t) { t.set(2, 499.0); }));        // a token top-k removed (vocab 500: not in its top 40)
  CHECK(fails([](HostTensor& t) {                               // the first and the last exchanged
    const double a = t.get(0);
    t.set(0, t.get(5));
    t.set(5, a);
  }));
}

TEST_CASE("gumbel_topk STAT: drawing with replacement and redrawing the tuple on a repeat is rejected", "[unit]") {
  const Case c = test::method_case("gumbel_topk", "batch=1,vocab=12,samples=3,draws=1000");
  const auto& m = dynamic_cast<const Sampler&>(*c.method);
  const TensorMap in = m.inputs(c);
  const Reference ref = m.reference(c, in);
  const std::vector<double> p = kept_probabilities(m.process_row(c, in, 0));
  const int64_t k = 3, n = c.i64("draws");
  const std::vector<double> right = k_set_probabilities(p, k);
  // The twin: P(S) ∝ Π_{x ∈ S} p_x (k! orders of equal probability, each set's share of the
  // distinct tuples).
  std::vector<double> twin(right.size(), 0.0);
  std::vector<std::vector<int64_t>> sets(right.size());
  for (int64_t a = 0; a < 12; ++a)
    for (int64_t b = a + 1; b < 12; ++b)
      for (int64_t d = b + 1; d < 12; ++d) {
        const int64_t cell = k_set_rank({a, b, d});
        twin[cell] = p[a] * p[b] * p[d];
        sets[cell] = {a, b, d};
      }
  const double total = std::accumulate(twin.begin(), twin.end(), 0.0);
  for (double& t : twin) t /= total;
  CHECK(test::twin_power("gumbel_topk", "with replacement, the tuple redrawn on a repeat", right, twin, n) >= 0.99);
  // Run it: the right kept mask, k-sets drawn from the twin's law (inverse CDF on Philox uniforms).
  TensorMap got = test::reference_as_outputs(c, ref);
  HostTensor& tokens = got.at("tokens");
  const PhiloxStream u(c.seed, "twin", kDomainDraws);
  std::vector<double> cdf(twin.size());
  std::partial_sum(twin.begin(), twin.end(), cdf.begin());
  for (int64_t r = 0; r < n; ++r) {
    const double x = u.uniform_f64(static_cast<uint64_t>(r));
    const auto cell = std::min<size_t>(std::lower_bound(cdf.begin(), cdf.end(), x) - cdf.begin(), cdf.size() - 1);
    for (int64_t i = 0; i < k; ++i) tokens.set(r * k + i, static_cast<double>(sets[cell][i]));
  }
  CHECK(m.check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
  CHECK_FALSE(m.check(c, in, ref, got).pass());
}
