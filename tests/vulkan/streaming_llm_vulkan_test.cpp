// streaming_llm on Vulkan: the EXACT checks pass on lavapipe for the shared cases and for rows
// copied in each word size of the shared gather (16-, 4- and 2-byte words), the same bits as the
// CPU backend; a case over lavapipe's binding limit is unsupported, naming the tensor.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "attnbench/registry.h"
#include "support.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

namespace {

// Beyond the shared cases: rows of 66 bytes (2-byte words) and of 36 bytes (4-byte words).
const std::vector<std::string> kMoreCases = {
    "streaming_llm/batch=1,q_heads=3,kv_heads=3,head_dim=33,kv_len=200,budget=50,n_sink=3/f16/s6",
    "streaming_llm/batch=2,q_heads=2,kv_heads=1,head_dim=9,kv_len=500,budget=499/f32/s7",
};

const char* kStreamingLlmSmall = "streaming_llm/batch=1,q_heads=2,kv_heads=1,head_dim=64,kv_len=100,budget=10/f16/s1";

}  // namespace

TEST_CASE("streaming_llm vulkan: EXACT checks pass, the CPU backend's bits", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  auto& cpu = test::require_backend("cpu");
  std::vector<std::string> ids = test::kStreamingLlmCases;
  ids.insert(ids.end(), kMoreCases.begin(), kMoreCases.end());
  for (const std::string& id : ids) {
    INFO(id);
    const Case c = test::case_from_id(id);
    const auto rows = test::check_case(c, be);
    REQUIRE(rows.size() == 1);
    CHECK(test::status_and_reason(rows[0]) == "pass ");
    CHECK(test::output_hash(rows[0]) == test::output_hash(test::check_case(c, cpu).at(0)));
  }
}

#if ATTNBENCH_HAS_VULKAN
TEST_CASE("streaming_llm vulkan: a cache over one binding is unsupported, naming it", "[unit]") {
  const ImplEntry* impl = registry().impls("streaming_llm", "vulkan").at(0);
  const auto support = [&](const char* id, const DeviceLimits& limits) {
    return impl->make()->supports(test::case_from_id(id), limits);
  };
  // K is 2^27 f32 elements, 512 MiB: over lavapipe's 128 MiB per binding, within the H200's 4 GiB.
  const char* big = "streaming_llm/batch=8,q_heads=8,kv_heads=8,head_dim=128,kv_len=16384,budget=1024/f32/s1";
  const Support lp = support(big, test::lavapipe_limits());
  CHECK_FALSE(lp.ok);
  CHECK_THAT(lp.reason, Catch::Matchers::Contains("k/v is 536870912 bytes, over this device's maxStorageBufferRange"));
  CHECK(support(big, test::h200_limits()).ok);
  // Without 16-bit storage the gather cannot copy 2-byte words: unsupported, not an error row.
  DeviceLimits no16 = test::lavapipe_limits();
  no16.features.erase("storage16");
  CHECK_THAT(support(kStreamingLlmSmall, no16).reason, Catch::Matchers::Contains("storage16"));
}
#endif
