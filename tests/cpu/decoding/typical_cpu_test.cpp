// typical on the CPU: the decoding family's sampler stage with typical's search after the chain;
// the shared cases (SET kept sets, SEMI tokens, STAT in distribution mode).
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("typical cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kTypicalCases) == std::vector<std::string>{});
}
