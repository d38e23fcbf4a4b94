// specdecpp on the CPU: the shared cases (tests/method_cases.h) on the best ISA and on the AVX2
// baseline, and a threshold of 1 verifying exactly as speculative_sampling (specdecpp_checks.h).
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "specdecpp_checks.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("specdecpp cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kSpecDecPPCases) == std::vector<std::string>{});
}

TEST_CASE("specdecpp cpu: never stopping early verifies as speculative_sampling does", "[cpu]") {
  CHECK(test::specdecpp_chain_mismatches(test::require_backend("cpu"), "race") == std::vector<std::string>{});
}
