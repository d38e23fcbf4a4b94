// tree_mask on Vulkan: the shared cases (every output EXACT): random trees, a chain, a star, a
// single node, a tree past one mask word, 1000 nodes (32 words a row), a chain 127 deep. And the
// plan's limits: the schema's largest trees fit lavapipe's shared memory and loop limiter at
// either subgroup size; a device with smaller workgroups or less shared memory refuses, saying why.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

TEST_CASE("tree_mask vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kTreeMaskCases, be) == std::vector<std::string>{});
}

#if ATTNBENCH_HAS_VULKAN

#include "attnbench/registry.h"

TEST_CASE("tree_mask vulkan: the plan admits the schema's trees and refuses past the device's limits", "[unit]") {
  const auto impls = registry().impls("tree_mask", "vulkan");
  REQUIRE(impls.size() == 1);
  const auto impl = impls.front()->make();
  // One binding holds the retrieve rows of one tree of 4096 nodes 4096 deep (64 MiB), not of two.
  const std::string chain = "tree_mask/build/batch=1,nodes=4096,max_depth=4095,shape=chain/i32/s1";
  const std::string random = "tree_mask/build/batch=1,nodes=4096,max_depth=4095/i32/s1";
  for (const DeviceLimits& limits : {test::h200_limits(), test::lavapipe_limits(8), test::lavapipe_limits(4)}) {
    for (const std::string& id : {chain, random}) {
      const Support s = impl->supports(test::case_from_id(id), limits);
      INFO(id << ": " << s.reason);
      CHECK(s.ok);
    }
  }
  DeviceLimits small = test::lavapipe_limits(8);
  small.max_workgroup_size = 256;
  const Support looped = impl->supports(test::case_from_id(chain), small);
  CHECK_FALSE(looped.ok);
  CHECK_THAT(looped.reason, Catch::Matchers::Contains("loop limit"));
  CHECK(impl->supports(test::case_from_id(test::kTreeMaskCases[5]), small).ok);
  small = test::lavapipe_limits(8);
  small.shared_mem_bytes = 4096;
  const Support shared = impl->supports(test::case_from_id(test::kTreeMaskCases[5]), small);
  CHECK_FALSE(shared.ok);
  CHECK_THAT(shared.reason, Catch::Matchers::Contains("shared memory"));
}

#endif
