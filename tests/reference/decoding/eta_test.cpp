// eta (reference/decoding/eta.cpp): η = min(ε, √ε·exp(−H)) by hand (where the entropy term binds
// and where ε does), over the chain's kept set; the STAT mode's power twin.
#include <catch2/catch.hpp>

#include <cmath>

#include "reference/decoding/sampler.h"
#include "sampler_tests.h"

using namespace attnbench;
using namespace attnbench::decoding;

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
