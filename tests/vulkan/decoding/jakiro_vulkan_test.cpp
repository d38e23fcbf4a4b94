// jakiro on Vulkan: the shared cases (features and logits TOL, the tree EXACT over the impl's own
// logits). And the plan's one limit: a Llama-sized LM head (bf16, 32000 x 4096: 250 MiB) is over
// lavapipe's 128 MiB binding, so there the case is refused, naming the tensor, while the H200's
// 4 GiB binding admits it.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

TEST_CASE("jakiro vulkan: the shared cases pass", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kJakiroCases, be) == std::vector<std::string>{});
}

#if ATTNBENCH_HAS_VULKAN

#include "attnbench/registry.h"

TEST_CASE("jakiro vulkan: an LM head over one storage binding is refused with its reason", "[unit]") {
  const auto impls = registry().impls("jakiro", "vulkan");
  REQUIRE(impls.size() == 1);
  const auto impl = impls.front()->make();
  const Case llama = test::case_from_id("jakiro/batch=1,hidden=4096,vocab=32000/bf16/s1");
  const Support big = impl->supports(llama, test::h200_limits());
  INFO(big.reason);
  CHECK(big.ok);
  const Support small = impl->supports(llama, test::lavapipe_limits(8));
  CHECK_FALSE(small.ok);
  CHECK_THAT(small.reason, Catch::Matchers::Contains("lm_head") && Catch::Matchers::Contains("maxStorageBufferRange"));
  for (const std::string& id : test::kJakiroCases) {
    const Support s = impl->supports(test::case_from_id(id), test::lavapipe_limits(4));
    INFO(id << ": " << s.reason);
    CHECK(s.ok);
  }
}

#endif
