// snapkv's Vulkan plan (impls/vulkan/kvcomp/snapkv_plan.cpp) for the H200 and for lavapipe at both
// of its subgroup sizes: tiles, splits and shared memory for every head_dim, and a refusal that
// names the binding it would overflow. (snapkv on the device: scored_selection_vulkan_test.cpp.)
#include <catch2/catch.hpp>

#include "support.h"
#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

#include "impls/vulkan/kvcomp/kv_stages.h"
#include "impls/vulkan/kvcomp/snapkv_plan.h"

using namespace attnbench;

namespace {

vulkan::snapkv::Plan plan(int64_t hq, int64_t hkv, int64_t d, int64_t T, int64_t w, int64_t budget, DType t,
                          const DeviceLimits& limits) {
  const Case c = test::case_from_id(cat("snapkv/batch=1,q_heads=", hq, ",kv_heads=", hkv, ",head_dim=", d, ",kv_len=", T,
                                        ",obs_window=", w, ",budget=", budget, "/", dtype_name(t), "/s1"));
  return vulkan::snapkv::make_plan(kvcomp::selection_params(c), kvcomp::snapkv_params(c), t, limits);
}

}  // namespace

TEST_CASE("the snapkv plans fit the H200 and lavapipe for every head_dim", "[unit]") {
  const DeviceLimits h200 = test::h200_limits();
  // Llama-3-8B heads, a 32k prompt: 64-row blocks (two heads of a 32-query window), the keys
  // split until every SM has work, within 48 KiB of shared memory.
  const auto p = plan(32, 8, 128, 32768, 32, 4096, DType::bf16, h200);
  REQUIRE(p.unsupported.empty());
  CHECK(p.scores_constants[4] == 64);
  CHECK(p.stats.plan.heads_per_block == 2);
  CHECK(p.stats.plan.groups >= 3 * 132);
  CHECK(p.sums.plan.groups >= 3 * 132);
  CHECK(p.scores_shared <= 49152);
  // The family's gather copies whole 16-byte words of its 256-byte rows.
  const Case llama = test::case_from_id("snapkv/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=32768,budget=4096/bf16/s1");
  CHECK(vulkan::kv::plan_stages(kvcomp::selection_params(llama), h200).gather_constants[1] == 16);
  // Every head_dim has a plan on both devices, at both of lavapipe's subgroup sizes.
  for (uint32_t sg : {8u, 4u}) {
    const DeviceLimits lp = test::lavapipe_limits(sg);
    for (int64_t d = 1; d <= 512; ++d) {
      INFO("head_dim " << d << " subgroup " << sg);
      CHECK(plan(8, 2, d, 1000, 32, 128, DType::f16, h200).unsupported.empty());
      const auto q = plan(8, 2, d, 1000, 32, 128, DType::f32, lp);
      CHECK(q.unsupported.empty());
      CHECK(q.scores_shared <= 32768);
    }
  }
  // Window queries over lavapipe's 128 MiB binding are refused, naming the tensor.
  CHECK_THAT(plan(32, 8, 128, 65536, 16384, 32768, DType::f32, test::lavapipe_limits()).unsupported,
             Catch::Matchers::Contains("q_obs is 268435456 bytes, over this device's maxStorageBufferRange"));
}

#endif
