// specdecpp on Vulkan: the shared cases (tests/method_cases.h: the linear and oracle heads, early
// stops and none, K_min = K_max, a single draft); the same bits whether the chain stage races the
// vocabulary in one span or three (its row lengths read on the device, then the finalize pass),
// and narrow teams of rows of different lengths in one subgroup; a threshold of 1 verifying
// exactly as speculative_sampling does (specdecpp_checks.h: the chain stage with and without row
// lengths); and the plan's refusal of the oracle head without fp64.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "specdecpp_checks.h"
#include "support.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

TEST_CASE("specdecpp vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kSpecDecPPCases, be) == std::vector<std::string>{});
}

TEST_CASE("specdecpp vulkan: never stopping early verifies as speculative_sampling does", "[vulkan]") {
  CHECK(test::specdecpp_chain_mismatches(test::require_backend("vulkan"), "race") == std::vector<std::string>{});
}

#if ATTNBENCH_HAS_VULKAN

#include "attnbench/registry.h"

namespace {

// The shared cases, plus narrow teams (a 64-token vocabulary) whose rows verify 6 or 7 drafts side
// by side in one subgroup.
const std::vector<std::string> kSpecDecPPVulkanCases = [] {
  std::vector<std::string> ids = test::kSpecDecPPCases;
  ids.push_back("specdecpp/batch=16,draft_len=8,min_draft_len=1,vocab=64,head=oracle,threshold=0.3,dist=flat,draft=independent/f32/s11");
  return ids;
}();

}  // namespace

TEST_CASE("specdecpp vulkan: the same bits with the vocabulary raced in one span or three", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  auto spans3 = test::open_backend("vulkan", {{"splits", "3"}});
  CHECK(test::rows_differing(kSpecDecPPVulkanCases, be, *spans3) == std::vector<std::string>{});
}

TEST_CASE("specdecpp vulkan: the plan admits the shared cases and refuses the oracle head without fp64", "[unit]") {
  const auto impls = registry().impls("specdecpp", "vulkan");
  REQUIRE(impls.size() == 1);
  const auto impl = impls.front()->make();
  for (const DeviceLimits& limits : {test::h200_limits(), test::lavapipe_limits(8), test::lavapipe_limits(4)}) {
    for (const std::string& id : test::kSpecDecPPCases) {
      const Support s = impl->supports(test::case_from_id(id), limits);
      INFO(id << ": " << s.reason);
      CHECK(s.ok);
    }
  }
  DeviceLimits no_fp64 = test::lavapipe_limits(8);
  no_fp64.features["float64"] = false;
  for (const std::string& id : test::kSpecDecPPCases) {
    const Case c = test::case_from_id(id);
    const Support s = impl->supports(c, no_fp64);
    INFO(id);
    CHECK(s.ok == (c.str("head") == "linear"));  // the linear head has no fp64
    if (!s.ok) CHECK_THAT(s.reason, Catch::Matchers::Contains("float64"));
  }
}

#endif
