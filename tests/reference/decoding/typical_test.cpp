// typical (reference/decoding/typical.cpp): the kept set by hand (ties at s* kept, the crossing
// token kept, over the chain's kept set), boundary tokens when the mass crossing is decided within
// rounding; the STAT mode's power twin.
#include <catch2/catch.hpp>

#include <cmath>

#include "reference/decoding/sampler.h"
#include "sampler_tests.h"

using namespace attnbench;
using namespace attnbench::decoding;

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
