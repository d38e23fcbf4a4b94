// penalties on CUDA: the shared cases (counts EXACT, penalised logits TOL), an empty history and
// one token among them.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("penalties cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kPenaltiesCases, be) == std::vector<std::string>{});
}
