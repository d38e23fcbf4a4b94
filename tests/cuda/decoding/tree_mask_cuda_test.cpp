// tree_mask on CUDA: the shared cases (every output EXACT): EAGLE-2's 60-node trees, a chain, a star,
// a lone root, 33 nodes (a second mask word), 1000 nodes (32 mask words, several 256-node passes
// per CTA) and a 128-deep chain.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("tree_mask cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kTreeMaskCases, be) == std::vector<std::string>{});
}
