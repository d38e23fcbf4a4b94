// frspec on Vulkan (lavapipe here): the shared cases (TOL head logits and q, SEMI drafts and chain,
// STAT in distribution mode) through the head, softmax and draft passes and speculative_sampling's
// stage, and the same bits on every run.
#include <catch2/catch.hpp>

#include "support.h"

#if ATTNBENCH_HAS_VULKAN

#include "method_cases.h"

using namespace attnbench;

TEST_CASE("frspec vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kFrspecCases, be) == std::vector<std::string>{});
}

TEST_CASE("frspec vulkan: the same bits on every run", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  const Case c = test::case_from_id(test::kFrspecCases[0]);
  CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
}

#endif
