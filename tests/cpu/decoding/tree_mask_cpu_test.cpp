// tree_mask on the CPU: the shared cases (every output EXACT): EAGLE-2-sized trees, a chain, a star,
// a lone root, a mask row past one word, a 1000-node tree and a 128-deep chain.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("tree_mask cpu: the shared cases pass", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kTreeMaskCases) == std::vector<std::string>{});
}
