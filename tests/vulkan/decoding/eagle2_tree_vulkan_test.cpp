// eagle2_tree on Vulkan: the shared cases (every output EXACT but for rows with a boundary event).
// And the plan's limits: the schema's widest trees and largest vocabulary fit lavapipe's shared
// memory and loop limiter at either subgroup size; a device without fp64 or with too little shared
// memory refuses, saying why.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

TEST_CASE("eagle2_tree vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kEagle2TreeCases, be) == std::vector<std::string>{});
}

#if ATTNBENCH_HAS_VULKAN

#include "attnbench/registry.h"

TEST_CASE("eagle2_tree vulkan: the plan admits the schema's extremes and refuses past the device's limits", "[unit]") {
  const auto impls = registry().impls("eagle2_tree", "vulkan");
  REQUIRE(impls.size() == 1);
  const auto impl = impls.front()->make();
  const std::string widest = "eagle2_tree/batch=1,top_k=32,depth=16,total_tokens=1023,vocab=4096/f32/s1";
  const std::string vocab = "eagle2_tree/batch=1,top_k=1,depth=1,total_tokens=1,vocab=1048576/f32/s1";
  for (const DeviceLimits& limits : {test::h200_limits(), test::lavapipe_limits(8), test::lavapipe_limits(4)}) {
    for (const std::string& id : {widest, vocab, test::kEagle2TreeCases[0]}) {
      const Support s = impl->supports(test::case_from_id(id), limits);
      INFO(id << ": " << s.reason);
      CHECK(s.ok);
    }
  }
  DeviceLimits small = test::lavapipe_limits(8);
  small.shared_mem_bytes = 8192;
  const Support shared = impl->supports(test::case_from_id(test::kEagle2TreeCases[0]), small);
  CHECK_FALSE(shared.ok);
  CHECK_THAT(shared.reason, Catch::Matchers::Contains("shared memory"));
}

#endif
