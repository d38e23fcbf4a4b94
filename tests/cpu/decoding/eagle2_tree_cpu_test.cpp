// eagle2_tree on the CPU: the shared cases (every output EXACT but for rows with a boundary event),
// on both ISAs and across thread counts (cpu_rows_not_passing).
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("eagle2_tree cpu: the shared cases pass", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kEagle2TreeCases) == std::vector<std::string>{});
}
