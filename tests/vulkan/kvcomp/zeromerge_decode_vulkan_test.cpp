// zeromerge_decode on Vulkan (lavapipe here): the shared cases (GQA groups of 1 to 7 query heads,
// head_dim 32 to 128, f32, f16 and bf16, a ring of one slot, the l2 metric and summed scores,
// many dense slots, a long prompt planted into a small budget) through zeromerge_decode.comp, its
// steps cut into several dispatches by llvmpipe's loop cap, and the same bits on a rerun; the
// plan's answers for an H200 and for lavapipe at subgroups 8 and 4 ([unit]).
#include <catch2/catch.hpp>

#include "attnbench/registry.h"
#include "method_cases.h"
#include "support.h"
#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

using namespace attnbench;

TEST_CASE("zeromerge_decode vulkan: the shared cases pass", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kZeromergeDecodeCases, vk).empty());
}

TEST_CASE("zeromerge_decode vulkan: the same bits on every run", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  const Case c = test::case_from_id(test::kZeromergeDecodeCases[1]);
  CHECK(test::output_hash(test::check_case(c, vk).at(0)) == test::output_hash(test::check_case(c, vk).at(0)));
}

TEST_CASE("zeromerge_decode's Vulkan plan: what it takes and what it refuses, naming why", "[unit]") {
  const auto impls = registry().impls("zeromerge_decode", "vulkan");
  REQUIRE(impls.size() == 1);
  const auto support = [&](const std::string& id, const DeviceLimits& limits) { return impls.front()->make()->supports(test::case_from_id(id), limits); };
  // A Llama-70B-like row (a group of 8 at head_dim 128) with a budget of 4096, and head_dim 256:
  // one dispatch on the H200, several under lavapipe's loop cap.
  const std::vector<std::string> wide = {
      "zeromerge_decode/decode/batch=2,q_heads=64,kv_heads=8,head_dim=128,kv_len=8000,budget=4096,dense=32,steps=64/bf16/s1",
      "zeromerge_decode/decode/batch=1,q_heads=16,kv_heads=2,head_dim=256,kv_len=3000,budget=2048,dense=16,steps=64/f32/s1"};
  std::vector<std::string> ids = test::kZeromergeDecodeCases;
  ids.insert(ids.end(), wide.begin(), wide.end());
  for (const DeviceLimits& limits : {test::h200_limits(), test::lavapipe_limits(8), test::lavapipe_limits(4)})
    for (const std::string& id : ids) {
      INFO(id << " subgroup " << limits.min_subgroup_size);
      const Support s = support(id, limits);
      INFO(s.reason);
      CHECK(s.ok);
    }
  // The group's queries and outputs are registers: a group of 32 is refused, as is a device
  // without subgroup shuffles (a key's dot is summed by its lanes' shuffles).
  const std::string mqa = "zeromerge_decode/decode/batch=1,q_heads=32,kv_heads=1,head_dim=64,kv_len=200,budget=128/f16/s1";
  CHECK_THAT(support(mqa, test::h200_limits()).reason, Catch::Matchers::Contains("a GQA group of 32"));
  DeviceLimits no_shuffle = test::lavapipe_limits();
  no_shuffle.features.erase("subgroup_shuffle");
  CHECK_THAT(support(test::kZeromergeDecodeCases[0], no_shuffle).reason, Catch::Matchers::Contains("subgroup_shuffle"));
}

#endif
