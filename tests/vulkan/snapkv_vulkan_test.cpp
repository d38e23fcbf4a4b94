// snapkv on Vulkan: the SET check passes on lavapipe for every path of the kernels — max and avg
// pooling, GQA ratios 1 to 7, window longer than a scoring block (segments), exact ties, head
// dims whose rows copy in 16-, 4- and 2-byte words, budget = window, everything kept — with the
// device's own splits and with every scoring pass forced into three, the same bits on a rerun;
// the plans for the H200.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"
#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

#include "impls/vulkan/kvcomp/snapkv_plan.h"

using namespace attnbench;

namespace {

// Beyond the shared cases: a window longer than a scoring block (segments) with rows copied
// in 2-byte words, and an MHA case copied in 4-byte words with avg pooling of 3.
const std::vector<std::string> kMoreCases = {
    "snapkv/batch=1,q_heads=2,kv_heads=1,head_dim=33,kv_len=400,obs_window=70,budget=150,pool_kernel=9/bf16/s7",
    "snapkv/batch=1,q_heads=3,kv_heads=3,head_dim=18,kv_len=333,obs_window=5,budget=50,pool=avg,pool_kernel=3/f16/s8",
};

}  // namespace

TEST_CASE("snapkv vulkan: the SET check passes with the device's splits and with three", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  auto split3 = test::open_backend("vulkan", {{"splits", "3"}});
  std::vector<std::string> ids = test::kSnapkvCases;
  ids.insert(ids.end(), kMoreCases.begin(), kMoreCases.end());
  for (const std::string& id : ids) {
    INFO(id);
    const Case c = test::case_from_id(id);
    std::vector<std::string> hashes;
    for (Backend* b : {&be, split3.get(), &be}) {
      const auto rows = test::check_case(c, *b);
      REQUIRE(rows.size() == 1);
      CHECK(test::status_and_reason(rows[0]) == "pass ");
      hashes.push_back(test::output_hash(rows[0]));
    }
    // Every sum has a fixed order: a rerun gives the same bits, whatever the scheduling.
    CHECK(hashes[0] == hashes[2]);
  }
}

TEST_CASE("the snapkv plans fit the H200 and lavapipe for every head_dim", "[unit]") {
  const auto shape = [](int64_t b, int64_t hq, int64_t hkv, int64_t d, int64_t T, int64_t w, int64_t budget) {
    return kvcomp::SnapkvShape{b, hq, hkv, d, T, w, budget, 7, 0, kvcomp::Pool::max};
  };
  const DeviceLimits h200 = test::h200_limits();
  // Llama-3-8B heads, a 32k prompt: 64-row blocks (two heads of a 32-query window), the keys
  // split until every SM has work, all within one binding and 48 KiB of shared memory.
  const auto p = vulkan::snapkv::make_plan(shape(1, 32, 8, 128, 32768, 32, 4096), DType::bf16, h200);
  REQUIRE(p.unsupported.empty());
  CHECK(p.scores_spec[4] == 64);
  CHECK(p.stats.heads_per_block == 2);
  CHECK(p.stats.groups >= 3 * 132);
  CHECK(p.sums.groups >= 3 * 132);
  CHECK(p.scores_shared <= 49152);
  CHECK(p.gather.spec[1] == 16);
  // Every head_dim has a plan on both devices, at both of lavapipe's subgroup sizes.
  for (uint32_t sg : {8u, 4u}) {
    const DeviceLimits lp = test::lavapipe_limits(sg);
    for (int64_t d = 1; d <= 512; ++d) {
      INFO("head_dim " << d << " subgroup " << sg);
      CHECK(vulkan::snapkv::make_plan(shape(1, 8, 2, d, 1000, 32, 128), DType::f16, h200).unsupported.empty());
      const auto q = vulkan::snapkv::make_plan(shape(1, 8, 2, d, 1000, 32, 128), DType::f32, lp);
      CHECK(q.unsupported.empty());
      CHECK(q.scores_shared <= 32768);
    }
  }
  // A cache larger than one of lavapipe's bindings is refused, naming the size.
  CHECK_THAT(vulkan::snapkv::make_plan(shape(1, 32, 8, 128, 131072, 32, 4096), DType::bf16, test::lavapipe_limits()).unsupported,
             Catch::Matchers::Contains("k/v is 268435456 bytes, over this device's maxStorageBufferRange"));
}

#else

TEST_CASE("snapkv vulkan: the SET check passes with the device's splits and with three", "[vulkan]") {
  attnbench::test::require_backend("vulkan");
}

#endif
