// typical on CUDA: the decoding family's sampler stage with typical's search after the chain; the
// shared cases (SET kept sets, SEMI tokens, STAT in distribution mode).
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("typical cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kTypicalCases, be) == std::vector<std::string>{});
}
