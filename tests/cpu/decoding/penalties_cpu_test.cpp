// penalties on the CPU: the shared cases (counts EXACT, penalised logits TOL), an empty history and
// one token among them.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("penalties cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kPenaltiesCases) == std::vector<std::string>{});
}
