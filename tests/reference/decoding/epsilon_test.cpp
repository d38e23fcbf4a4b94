// epsilon (reference/decoding/epsilon.cpp): the floor by hand, over what the chain kept, the top
// token and its ties always kept, boundary tokens at the floor; the STAT mode's power twin.
#include <catch2/catch.hpp>

#include <cmath>

#include "reference/decoding/sampler.h"
#include "sampler_tests.h"

using namespace attnbench;
using namespace attnbench::decoding;

TEST_CASE("epsilon: keeps p >= epsilon over the chain's kept set, and always the top token and its ties", "[unit]") {
  CHECK(test::kept_by("epsilon", "epsilon=0.1") == std::vector<int64_t>{0, 1, 2});
  CHECK(test::kept_by("epsilon", "epsilon=0.6") == std::vector<int64_t>{0});  // nothing reaches it: the top
  // After top_k = 3 the kept p are 0.5/0.9 and 0.2/0.9 = 0.222: 0.21 keeps them (the full row's 0.2 would not).
  CHECK(test::kept_by("epsilon", "epsilon=0.21,top_k=3") == std::vector<int64_t>{0, 1, 2});
  CHECK(test::kept_by("epsilon", "epsilon=0.9", {0.3, 0.3, 0.2, 0.2}) == std::vector<int64_t>{0, 1});
  // p within rounding of the floor: membership either way (the tokens at 0.05).
  CHECK(test::boundary_by("epsilon", "epsilon=0.0500000001") == std::vector<int64_t>{3, 4});
  CHECK(test::boundary_by("epsilon", "epsilon=0.06").empty());
}

TEST_CASE("epsilon STAT: the floor against the full row's p (before the chain renormalises) is rejected", "[unit]") {
  const Case c = test::method_case("epsilon", "batch=1,vocab=24,top_k=6,epsilon=0.045,draws=4000");
  const auto& m = dynamic_cast<const Sampler&>(*c.method);
  const std::vector<double> l = test::logits_row0(c);
  ProcessedRow twin = standard_chain(m.chain(c), l.data(), 24);
  ProcessorChain full = m.chain(c);
  full.top_k = 0;
  remove_below_floor(twin, kept_probabilities(standard_chain(full, l.data(), 24)), c.f64("epsilon"));
  test::check_power_twin(c, twin, "epsilon against the full row's probabilities");
}
