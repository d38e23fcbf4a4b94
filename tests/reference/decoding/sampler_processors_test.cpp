// The sampler stage's processors in the reference: epsilon (reference/decoding/epsilon.cpp), eta
// (eta.cpp), typical (typical.cpp) and top-H (top_h.cpp). Each one's kept set by hand on a row of
// five tokens (over what the chain kept, the top token and its ties always kept, ties at typical's
// crossing kept, top-H's ties at its cut ranked by index),
// its boundary tokens where fp32 rounding may decide membership, and its STAT mode's power twin.
#include <catch2/catch.hpp>

#include <algorithm>
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

TEST_CASE("eta: the floor is min(epsilon, sqrt(epsilon) exp(-H)), H in nats over the kept set", "[unit]") {
  const double H = entropy(test::kFiveTokens);  // 1.2899 nats
  CHECK(H == Approx(0.5 * std::log(2.0) + 0.4 * std::log(5.0) + 0.1 * std::log(20.0)));
  // ε = 0.25: √ε·e^−H = 0.1377 binds, so the 0.2s stay (epsilon sampling at 0.25 keeps only the top).
  CHECK(std::sqrt(0.25) * std::exp(-H) == Approx(0.1377).epsilon(1e-3));
  CHECK(test::kept_by("eta", "epsilon=0.25") == std::vector<int64_t>{0, 1, 2});
  // ε = 0.04: ε binds (√ε·e^−H = 0.055), so the 0.05s stay.
  CHECK(test::kept_by("eta", "epsilon=0.04") == std::vector<int64_t>{0, 1, 2, 3, 4});
  // ε = 0.9: η = 0.261, above the 0.2s: the top alone.
  CHECK(test::kept_by("eta", "epsilon=0.9") == std::vector<int64_t>{0});
  // Over the chain's kept set: top_k = 3 leaves H = 0.9950 and p = 0.5/0.9, 0.2/0.9; ε = 0.5 gives
  // η = √0.5·e^−0.995 = 0.2614, above 0.222: the top alone (the full row's H would give 0.1947).
  CHECK(test::kept_by("eta", "epsilon=0.5,top_k=3") == std::vector<int64_t>{0});
  CHECK(test::kept_by("eta", "epsilon=0.5") == std::vector<int64_t>{0, 1, 2});
}

TEST_CASE("eta STAT: the entropy in bits is rejected", "[unit]") {
  const Case c = test::method_case("eta", "batch=1,vocab=24,epsilon=0.1,draws=4000");
  const auto& m = dynamic_cast<const Sampler&>(*c.method);
  const std::vector<double> l = test::logits_row0(c);
  ProcessedRow twin = standard_chain(m.chain(c), l.data(), 24);
  const std::vector<double> p = kept_probabilities(twin);
  const double eps = c.f64("epsilon");
  remove_below_floor(twin, p, std::min(eps, std::sqrt(eps) * std::exp(-entropy(p) / std::log(2.0))));
  test::check_power_twin(c, twin, "eta with the entropy in bits");
}

TEST_CASE("typical: tokens by distance from the entropy until they hold mass, the crossing one and its ties kept", "[unit]") {
  // p = 0.5, 0.2, 0.2, 0.05, 0.05: H = 1.2899, s = |−ln p − H| = 0.597, 0.319, 0.319, 1.706, 1.706;
  // by s the running mass is 0.2, 0.4 (the 0.2s), 0.9 (the 0.5), then 0.95 and 1.
  CHECK(test::kept_by("typical", "mass=0.1") == std::vector<int64_t>{1, 2});  // the tie at s* stays
  CHECK(test::kept_by("typical", "mass=0.3") == std::vector<int64_t>{1, 2});
  CHECK(test::kept_by("typical", "mass=0.5") == std::vector<int64_t>{0, 1, 2});
  CHECK(test::kept_by("typical", "mass=0.92") == std::vector<int64_t>{0, 1, 2, 3, 4});
  // After top_k = 3: p = 0.556, 0.222, 0.222, H = 0.995, s = 0.407, 0.509, 0.509: the top first.
  CHECK(test::kept_by("typical", "mass=0.3,top_k=3") == std::vector<int64_t>{0});
  // A crossing within rounding: the mass through s* (0.4) is 0.3 + 0.1; at mass 0.4 the next run (the
  // 0.5) may join, and the tokens at s* stay whichever way the sums round.
  CHECK(test::boundary_by("typical", "mass=0.4") == std::vector<int64_t>{0});
  CHECK(test::boundary_by("typical", "mass=0.3").empty());
}

TEST_CASE("typical STAT: dropping the tokens at the crossing distance is rejected", "[unit]") {
  const Case c = test::method_case("typical", "batch=1,vocab=24,mass=0.5,draws=4000");
  const auto& m = dynamic_cast<const Sampler&>(*c.method);
  const TensorMap in = m.inputs(c);
  ProcessedRow twin = m.process_row(c, in, 0);
  // The kept tokens farthest from the entropy: those at s*.
  const std::vector<double> p = kept_probabilities(twin);
  const double H = entropy(p);
  double s_star = 0;
  for (size_t x = 0; x < p.size(); ++x)
    if (twin.kept[x]) s_star = std::max(s_star, std::abs(-std::log(p[x]) - H));
  for (size_t x = 0; x < p.size(); ++x)
    if (twin.kept[x] && std::abs(-std::log(p[x]) - H) == s_star) twin.kept[x] = 0, twin.z[x] = -INFINITY;
  test::check_power_twin(c, twin, "typical without the tokens at s*");
}

TEST_CASE("top_h: the longest run of the most probable tokens within alpha of the top N's entropy", "[unit]") {
  // p = 0.5, 0.2, 0.2, 0.05, 0.05: h = −p ln p = 0.3466, 0.3219, 0.3219, 0.1498, 0.1498; the running
  // entropy 0.3466, 0.6685, 0.9904, 1.1401, 1.2899 (= H).
  CHECK(test::kept_by("top_h", "top_n=5,alpha=0.4") == std::vector<int64_t>{0});  // τ = 0.516
  CHECK(test::kept_by("top_h", "top_n=5,alpha=0.6") == std::vector<int64_t>{0, 1});  // τ = 0.774: one of the 0.2s, by index
  CHECK(test::kept_by("top_h", "top_n=5,alpha=0.8") == std::vector<int64_t>{0, 1, 2});  // τ = 1.032
  CHECK(test::kept_by("top_h", "top_n=5,alpha=1") == std::vector<int64_t>{0, 1, 2, 3, 4});  // the clamp: all N
  CHECK(test::kept_by("top_h", "top_n=3,alpha=0.8") == std::vector<int64_t>{0, 1});  // τ = 0.8·0.9904 = 0.792
  CHECK(test::kept_by("top_h", "top_n=5,alpha=0.1") == std::vector<int64_t>{0});  // the top alone exceeds τ: m = 1
  CHECK(test::kept_by("top_h", "top_n=2,alpha=1") == std::vector<int64_t>{0, 1});  // at most N
  // Over the chain's kept set: after top_k = 3, p = 0.556, 0.222, 0.222 and h = 0.3266, 0.3342, 0.3342;
  // alpha = 0.6 gives τ = 0.597, the top alone (the full row's p would keep two).
  CHECK(test::kept_by("top_h", "top_n=5,alpha=0.6,top_k=3") == std::vector<int64_t>{0});
  // τ within rounding of the running entropy through the second token: that token either way.
  const double h1 = -0.5 * std::log(0.5), h2 = -0.2 * std::log(0.2), H = entropy(test::kFiveTokens);
  CHECK(test::boundary_by("top_h", cat("top_n=5,alpha=", (h1 + h2) / H)) == std::vector<int64_t>{1});
  CHECK(test::boundary_by("top_h", "top_n=5,alpha=0.6").empty());
  CHECK(test::boundary_by("top_h", "top_n=5,alpha=1").empty());
}

TEST_CASE("top_h STAT: stopping one token early is rejected", "[unit]") {
  const Case c = test::method_case("top_h", "batch=1,vocab=24,top_n=24,alpha=0.8,draws=4000");
  const auto& m = dynamic_cast<const Sampler&>(*c.method);
  const TensorMap in = m.inputs(c);
  ProcessedRow twin = m.process_row(c, in, 0);
  // The kept token of the smallest z: the last of the kept run.
  int64_t last = -1;
  for (size_t x = 0; x < twin.z.size(); ++x)
    if (twin.kept[x] && (last < 0 || twin.z[x] <= twin.z[last])) last = static_cast<int64_t>(x);
  REQUIRE(test::flagged(twin.kept).size() >= 2);
  twin.kept[last] = 0, twin.z[last] = -INFINITY;
  test::check_power_twin(c, twin, "top-H that stops one token early");
}
