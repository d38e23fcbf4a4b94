// tree_verify on Vulkan: the shared cases (greedy EXACT, typical SEMI): long and empty accepted
// paths, a chain, a star, ties, one-hot and flat targets, a 128256-token vocabulary. And the
// plan's refusal of a device without shaderFloat64 (the entropy sum), saying why.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

TEST_CASE("tree_verify vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kTreeVerifyCases, be) == std::vector<std::string>{});
}

#if ATTNBENCH_HAS_VULKAN

#include "attnbench/registry.h"

TEST_CASE("tree_verify vulkan: the plan admits the shared cases and refuses a device without fp64", "[unit]") {
  const auto impls = registry().impls("tree_verify", "vulkan");
  REQUIRE(impls.size() == 1);
  const auto impl = impls.front()->make();
  for (const DeviceLimits& limits : {test::h200_limits(), test::lavapipe_limits(8), test::lavapipe_limits(4)}) {
    for (const std::string& id : test::kTreeVerifyCases) {
      const Support s = impl->supports(test::case_from_id(id), limits);
      INFO(id << ": " << s.reason);
      CHECK(s.ok);
    }
  }
  DeviceLimits no_fp64 = test::lavapipe_limits(8);
  no_fp64.features["float64"] = false;
  const Support s = impl->supports(test::case_from_id(test::kTreeVerifyCases[0]), no_fp64);
  CHECK_FALSE(s.ok);
  CHECK_THAT(s.reason, Catch::Matchers::Contains("float64"));
}

#endif
