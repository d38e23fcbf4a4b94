// One split of many keys on the real device: llvmpipe's loop limiter (65535 loop iterations per
// invocation) once cut the tiled kernel's key loop short, and the rows came back as attention over
// the first ~10.6k keys. With one split forced, these cases pass only if the plan splits the keys
// where the driver needs it (attention_plan.cpp, keys_within_loop_cap).
#include <catch2/catch.hpp>

#include "support.h"

#if ATTNBENCH_HAS_VULKAN

#include "impls/vulkan/runtime/vulkan_backend.h"

using namespace attnbench;

TEST_CASE("attention on Vulkan with one split forced over 12k keys: no key dropped", "[vulkan]") {
  test::require_backend("vulkan");
  vulkan::VulkanBackend be;
  be.set_option("splits", "1");
  REQUIRE(be.probe().available);
  const std::vector<std::string> ids = {
      // 16 rows per KV head: the tiled kernel; head_dim 256 has the shortest reach.
      "mqa/decode/batch=1,q_heads=16,head_dim=128,q_len=1,kv_len=12000,causal=true,ragged=false,head_lengths=false/bf16/s1",
      "mqa/decode/batch=1,q_heads=16,head_dim=256,q_len=1,kv_len=6000,causal=true,ragged=false,head_lengths=false/bf16/s1",
      // 4 rows: the split-KV decode kernel.
      "gqa/decode/batch=1,q_heads=8,kv_heads=2,head_dim=128,q_len=1,kv_len=12000,causal=true,ragged=false,head_lengths=false/bf16/s1",
  };
  CHECK(test::rows_not_passing(ids, be).empty());
}

#endif
