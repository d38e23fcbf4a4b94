// jakiro on the CPU: the shared cases (features and logits TOL, the tree EXACT over the impl's own
// logits), on both ISAs and across thread counts (cpu_rows_not_passing).
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("jakiro cpu: the shared cases pass", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kJakiroCases) == std::vector<std::string>{});
}
