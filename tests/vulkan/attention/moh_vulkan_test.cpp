// moh on Vulkan (lavapipe with the validation layers in CI): both routers on tests/moh_checks.h's
// cases against the fp64 reference, every head running equal to gqa's portable kernels bit for
// bit (the row map is then every row, and a gate of 1 scales nothing), the keys split so the merge
// walks the row map, and the plans of head-sparse attention at both of lavapipe's subgroup sizes.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "moh_checks.h"
#include "support.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

TEST_CASE("moh passes on Vulkan with both routers", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kMohCases, vk).empty());
}

TEST_CASE("moh on Vulkan with every head running is gqa, bit for bit", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::moh_all_heads_mismatches(vk, "portable", "portable").empty());
}

#if ATTNBENCH_HAS_VULKAN

#include "attnbench/registry.h"
#include "impls/vulkan/attention/attention_plan.h"
#include "impls/vulkan/runtime/vulkan_backend.h"
#include "reference/attention/moh_common.h"

TEST_CASE("moh on Vulkan with the keys split in three: the merge walks the row map", "[vulkan]") {
  test::require_backend("vulkan");
  vulkan::VulkanBackend be;
  be.set_option("splits", "3");
  REQUIRE(be.probe().available);
  // Decode with both routers (one ragged), prefill on the tiled kernel (one with soft-cap and
  // ALiBi), per-KV-head lengths.
  const std::vector<std::string> ids = {test::kMohCases[0], test::kMohCases[1], test::kMohCases[2], test::kMohCases[7],
                                        test::kMohCases[8]};
  CHECK(test::rows_not_passing(ids, be).empty());
}

TEST_CASE("the Vulkan plans of moh's head-sparse attention", "[unit]") {
  for (uint32_t sg : {8u, 4u}) {
    const DeviceLimits lavapipe = test::lavapipe_limits(sg);
    for (const std::string& id : test::kMohCases) {
      INFO(id << " subgroup " << sg);
      const Case c = test::case_from_id(id);
      const moh::MohStages st = moh::moh_stages(c);
      REQUIRE(st.attention.head_sparse == 1);
      const vulkan::attn::Plan p = vulkan::attn::plan_portable(st.attention, c.dtype, lavapipe);
      INFO(p.unsupported);
      CHECK(p.unsupported.empty());
      // The impl takes the case: the logits projection and the router have plans too.
      const auto impls = registry().impls("moh", "vulkan");
      REQUIRE(impls.size() == 1);
      const Support s = impls.front()->make()->supports(c, lavapipe);
      INFO(s.reason);
      CHECK(s.ok);
    }
  }
  // The cooperative-matrix kernel does not walk the row map: it refuses, naming why.
  const Case prefill = test::case_from_id("moh/prefill/batch=1,q_heads=32,kv_heads=8,q_len=4096,kv_len=4096/f16/s1");
  const vulkan::attn::Plan cm =
      vulkan::attn::plan_coopmat_nv(moh::moh_stages(prefill).attention, DType::f16, test::h200_limits(), "prefill");
  CHECK_THAT(cm.unsupported, Catch::Matchers::Contains("head_sparse"));
}

#endif
