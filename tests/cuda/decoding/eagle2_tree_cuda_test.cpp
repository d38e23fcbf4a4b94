// eagle2_tree on CUDA: the shared cases (every output EXACT but for rows with a boundary event):
// EAGLE-2's settings at two vocabularies, a chain, the clamp, planted ties, peaked and flat drafts,
// one level, a vocabulary off the vector widths and the schema's widest tree.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("eagle2_tree cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kEagle2TreeCases, be) == std::vector<std::string>{});
}
