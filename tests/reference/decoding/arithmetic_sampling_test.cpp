// arithmetic_sampling's reference (reference/decoding/arithmetic_sampling.cpp): the fixed-point
// code arithmetic every backend shares by hand (the lattice, the pick's position, the next code),
// the lattice's joint law of two codes' tokens by hand, the first step's tokens as the inverse CDF
// of the code, the check's negative tests, and the STAT mode's power twin: codes from independent
// uniforms where the lattice is required, rejected at the suite's n and α by the pair test.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <numeric>

#include "attnbench/check_stat.h"
#include "attnbench/rng.h"
#include "reference/decoding/arithmetic_common.h"
#include "reference/decoding/arithmetic_sampling.h"
#include "reference/decoding/sampler.h"
#include "sampler_tests.h"

using namespace attnbench;
using namespace attnbench::decoding;

TEST_CASE("arithmetic_sampling: the fixed-point codes by hand", "[unit]") {
  // The lattice: floor(2^64·(i + 1)/(N + 1)); N = 3 gives 1/4, 1/2, 3/4.
  CHECK(arithmetic_lattice(0, 3) == uint64_t{1} << 62);
  CHECK(arithmetic_lattice(1, 3) == uint64_t{1} << 63);
  CHECK(arithmetic_lattice(2, 3) == (uint64_t{3} << 62));
  CHECK(arithmetic_lattice(0, 2) == 0x5555555555555555ull);  // floor(2^64/3)
  // Masses 5, 3, 2 (Z = 10) and c = 0.6: position floor(0.6·10) = 6, in token 1's bucket [5, 8);
  // the next code (c − 0.5)/0.3 = 1/3.
  const uint64_t c = 0x999999999999999Aull;  // 0.6·2^64, rounded up
  CHECK(arithmetic_position(c, 10) == 6);
  const uint64_t next = arithmetic_next(c, 10, 5, 3);
  CHECK(std::ldexp(static_cast<double>(next), -64) == Approx(1.0 / 3).epsilon(1e-15));
  // The top of the last bucket: the position stays below Z.
  CHECK(arithmetic_position(~uint64_t{0}, 10) == 9);
}

TEST_CASE("arithmetic_sampling: the joint law of two codes a lattice step apart, by hand", "[unit]") {
  // p = 1/2, 1/2 and a shift of 1/3: c in [0, 1/6) picks (0, 0), [1/6, 1/2) (0, 1), [1/2, 2/3)
  // (1, 1), [2/3, 1) (1, 0).
  const std::vector<double> j = lattice_pair_probabilities({0.5, 0.5}, 1.0 / 3);
  CHECK(j[0] == Approx(1.0 / 6));
  CHECK(j[1] == Approx(1.0 / 3));
  CHECK(j[2] == Approx(1.0 / 3));
  CHECK(j[3] == Approx(1.0 / 6));
  // Marginals are p, and a zero-mass token pairs with nothing.
  const std::vector<double> p = {0.4, 0.0, 0.35, 0.25};
  const std::vector<double> q = lattice_pair_probabilities(p, 0.2);
  for (int64_t v = 0; v < 4; ++v) {
    double row = 0, col = 0;
    for (int64_t w = 0; w < 4; ++w) row += q[v * 4 + w], col += q[w * 4 + v];
    CHECK(row == Approx(p[v]).margin(1e-12));
    CHECK(col == Approx(p[v]).margin(1e-12));
  }
}

TEST_CASE("arithmetic_sampling: the first step's token is the code's bucket in token-id order", "[unit]") {
  // Each sequence's code from its prompt's offset and its lattice point, against its own row's CDF.
  const Case c = test::method_case("arithmetic_sampling", "batch=3,vocab=50,codes=16,steps=2,temperature=1.5");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const PhiloxStream offsets(c.seed, "arith.offset", kDomainDraws);
  for (int64_t b = 0; b < 3; ++b) {
    const uint64_t u = offsets.word(2 * b) | static_cast<uint64_t>(offsets.word(2 * b + 1)) << 32;
    for (int64_t i = 0; i < 16; ++i) {
      const int64_t r = b * 16 + i;
      const double code = std::ldexp(static_cast<double>(u + arithmetic_lattice(i, 16)), -64);
      const std::vector<double> p = kept_probabilities(dynamic_cast<const Sampler&>(*c.method).process_row(c, in, r));
      double before = 0;
      int64_t want = 0;
      while (want < 49 && before + p[want] <= code) before += p[want++];
      CHECK(ref.tensors.at("token").get(r) == static_cast<double>(want));
    }
  }
}

TEST_CASE("arithmetic_sampling check: a token out of the kept set and a wrong first step fail", "[unit]") {
  const Case c = test::method_case("arithmetic_sampling", "batch=2,vocab=300,top_k=20,codes=4,steps=3");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const auto fails = [&](const std::function<void(HostTensor&)>& edit) {
    TensorMap got = test::reference_as_outputs(c, ref);
    edit(got.at("token"));
    return !c.method->check(c, in, ref, got).pass();
  };
  CHECK_FALSE(fails([](HostTensor&) {}));
  CHECK(fails([](HostTensor& t) { t.set(0, 299.0); }));  // not in row 0's top 20 (vocab 300, zipf)
  CHECK(fails([&](HostTensor& t) {                       // sequence 0's first token exchanged with sequence 7's
    const double a = t.get(0);
    t.set(0, t.get(7) == a ? t.get(6) : t.get(7));
  }));
}

TEST_CASE("arithmetic_sampling STAT: codes from independent uniforms are rejected", "[unit]") {
  const Case c = test::method_case("arithmetic_sampling", "batch=1,vocab=24,codes=4,steps=2,draws=500");
  const auto& m = dynamic_cast<const Sampler&>(*c.method);
  const TensorMap in = m.inputs(c);
  const Reference ref = m.reference(c, in);
  const std::vector<double> p = kept_probabilities(m.process_row(c, in, 0));
  const int64_t n = c.i64("draws"), N = c.i64("codes"), V = 24;
  const std::vector<double> lattice = lattice_pair_probabilities(p, 1.0 / static_cast<double>(N + 1));
  std::vector<double> independent(V * V);
  for (int64_t v = 0; v < V; ++v)
    for (int64_t w = 0; w < V; ++w) independent[v * V + w] = p[v] * p[w];
  CHECK(test::twin_power("arithmetic_sampling", "codes from independent uniforms", lattice, independent, n) >= 0.99);
  // Run it: every code its own uniform (the right kept masks), and the check rejects.
  TensorMap got = test::reference_as_outputs(c, ref);
  HostTensor& tokens = got.at("token");
  const PhiloxStream u(c.seed, "twin", kDomainDraws);
  std::vector<double> cdf(p.size());
  std::partial_sum(p.begin(), p.end(), cdf.begin());
  for (int64_t r = 0; r < tokens.numel(); ++r) {
    const auto x = std::lower_bound(cdf.begin(), cdf.end(), u.uniform_f64(static_cast<uint64_t>(r))) - cdf.begin();
    tokens.set(r, static_cast<double>(std::min<int64_t>(x, V - 1)));
  }
  CHECK(m.check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
  CHECK_FALSE(m.check(c, in, ref, got).pass());
}
