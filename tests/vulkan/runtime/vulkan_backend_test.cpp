// The Vulkan backend's contracts: device choice errors, VkResult errors as BackendError,
// validation messages failing the work that caused them, forced KV splits (the merge pass) and
// the kernels' plans for the H200 the project benchmarks on.
#include <catch2/catch.hpp>

#include "support.h"
#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

#include "attnbench/error.h"
#include "impls/vulkan/attention/attention_plan.h"
#include "impls/vulkan/runtime/vk_check.h"
#include "impls/vulkan/runtime/vulkan_backend.h"

using namespace attnbench;
using Catch::Matchers::Contains;

TEST_CASE("a Vulkan device index out of range is an input error naming the devices", "[vulkan]") {
  test::require_backend("vulkan");
  vulkan::VulkanBackend be;
  be.set_option("device", "99");
  REQUIRE_THROWS_AS(be.probe(), InputError);
  try {
    be.probe();
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Contains("=99 is out of range (devices: 0 \""));
  }
}

TEST_CASE("a failed Vulkan call is a BackendError naming the call and the VkResult", "[vulkan]") {
  const auto fail = [] { ATTNBENCH_VK_CHECK(static_cast<VkResult>(VK_ERROR_OUT_OF_DEVICE_MEMORY)); };
  REQUIRE_THROWS_AS(fail(), BackendError);
  try {
    fail();
  } catch (const BackendError& e) {
    CHECK_THAT(e.what(), Contains("VK_ERROR_OUT_OF_DEVICE_MEMORY"));
    CHECK_THAT(e.what(), Contains("vulkan: "));
  }
  auto& be = test::require_backend("vulkan");
  CHECK_THROWS_AS(be.allocator().allocate(be.allocator().max_allocation() + 1, "too_big"), BackendError);
}

TEST_CASE("a synchronization hazard found by validation fails the submission", "[vulkan]") {
  test::require_backend("vulkan");
  vulkan::VulkanBackend be;
  be.set_option("validation", "1");
  REQUIRE(be.probe().available);
  BufferPtr src = be.allocator().allocate(1 << 16, "src"), dst = be.allocator().allocate(1 << 16, "dst");
  const vulkan::Pipeline& p = be.pipeline("peak_copy", {64}, 2);
  auto k = be.bind(p, {src.get(), dst.get()});
  const auto& vk = be.device().vk();
  VkCommandBuffer cb = be.stream().commands();
  const uint32_t push[2] = {(1 << 16) / 16, 4};
  // A dispatch writing dst, then a fill of dst with no barrier between them: write-after-write.
  vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  const VkDescriptorSet set = k->set();
  vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  vk.vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
  vk.vkCmdDispatch(cb, 4, 1, 1);
  vk.vkCmdFillBuffer(cb, vulkan::vk_buffer(*dst), dst->offset(), 256, 0);
  try {
    be.synchronize();
    FAIL("synchronize() raised no validation message");
  } catch (const BackendError& e) {
    CHECK_THAT(e.what(), Contains("SYNC-HAZARD-WRITE-AFTER-WRITE"));
  }
  // The same work through the backend's stream (a barrier before every command) raises nothing.
  be.dispatch(*k, push, 4);
  be.stream().fill(vulkan::vk_buffer(*dst), dst->offset(), 256, 0);
  CHECK_NOTHROW(be.synchronize());
}

TEST_CASE("split-KV partials merge to the single-pass answer", "[vulkan]") {
  test::require_backend("vulkan");
  vulkan::VulkanBackend be;
  be.set_option("splits", "3");
  REQUIRE(be.probe().available);
  const char* ids[] = {
      "gqa/decode/batch=3,q_heads=8,kv_heads=2,head_dim=80,kv_len=300,ragged=true/bf16/s1",
      "gqa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=64,q_len=40,kv_len=200,ragged=true/f16/s1",
      "mha/prefill/batch=1,q_heads=2,head_dim=32,q_len=70,kv_len=70,causal=true/f32/s1",
      "gqa/prefill/batch=1,q_heads=4,kv_heads=1,head_dim=16,q_len=30,kv_len=5/f32/s1",
  };
  for (const char* id : ids) {
    INFO(id);
    const auto rows = test::check_case(test::case_from_id(id), be);
    REQUIRE(!rows.empty());
    for (const auto& r : rows) CHECK(test::status_and_reason(r) == "pass ");
  }
}

#else

TEST_CASE("the Vulkan backend is compiled in", "[vulkan]") { attnbench::test::require_backend("vulkan"); }

#endif
