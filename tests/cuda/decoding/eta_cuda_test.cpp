// eta on CUDA: the decoding family's sampler stage with its probability floor at min(epsilon,
// sqrt(epsilon) exp(-H)); the shared cases (SET kept sets, SEMI tokens, STAT in distribution mode).
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("eta cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kEtaCases, be) == std::vector<std::string>{});
}
