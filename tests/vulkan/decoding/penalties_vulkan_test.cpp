// penalties on Vulkan: the shared cases (counts EXACT, penalised logits TOL), an empty history and
// one token among them.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("penalties vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kPenaltiesCases, be) == std::vector<std::string>{});
}
