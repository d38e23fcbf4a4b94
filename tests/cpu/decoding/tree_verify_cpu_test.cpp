// tree_verify on the CPU: the shared cases (greedy EXACT, typical SEMI) on the best ISA and on the
// AVX2 baseline: long and empty accepted paths, a chain, a star, ties, one-hot and flat targets,
// the stochastic modes; and a chain equal to speculative_sampling (tree_chain_checks.h).
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "tree_chain_checks.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("tree_verify cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kTreeVerifyCases) == std::vector<std::string>{});
}

TEST_CASE("tree_verify cpu: a chain verifies as speculative_sampling does", "[cpu]") {
  CHECK(test::tree_chain_mismatches(test::require_backend("cpu")) == std::vector<std::string>{});
}
