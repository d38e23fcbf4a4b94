// mla on Vulkan (lavapipe with the validation layers in CI): every case of tests/mla_checks.h in
// both forms, and the plans of the stages it chains: the attention kernels with V narrower than K
// and V read from K's rows, the cooperative-matrix kernel refusing that shape, and the projection
// tiles for decode's single query row and a long cache.
#include <catch2/catch.hpp>

#include <cmath>

#include "mla_checks.h"
#include "support.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

TEST_CASE("mla passes on Vulkan, both forms", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kMlaCases, vk).empty());
}

#if ATTNBENCH_HAS_VULKAN

#include "impls/vulkan/attention/attention_plan.h"
#include "impls/vulkan/attention/projection_stage.h"
#include "impls/vulkan/runtime/vulkan_backend.h"
#include "reference/attention/mla_common.h"

TEST_CASE("mla on Vulkan with the keys split in three: partials as wide as V, merged", "[vulkan]") {
  test::require_backend("vulkan");
  vulkan::VulkanBackend be;
  be.set_option("splits", "3");
  REQUIRE(be.probe().available);
  // DeepSeek-V3's widths at decode, the small odd widths at prefill, no rotary key: both forms; and
  // PreRoPE on a ragged batch.
  std::vector<std::string> ids(test::kMlaCases.begin(), test::kMlaCases.begin() + 2);
  ids.insert(ids.end(), test::kMlaCases.begin() + 10, test::kMlaCases.begin() + 15);
  CHECK(test::rows_not_passing(ids, be).empty());
}

namespace {

mla::MlaStages deepseek_v3(int32_t batch, int32_t q_len, int32_t kv, bool absorbed) {
  mla::MlaParams m{batch, 128, q_len, kv, 1, 512, 64, 128, 128, absorbed, static_cast<float>(1.0 / std::sqrt(192.0))};
  return mla::mla_stages(m);
}

}  // namespace

TEST_CASE("the Vulkan plans of mla's stages", "[unit]") {
  for (const DeviceLimits& limits : {test::h200_limits(), test::lavapipe_limits(8), test::lavapipe_limits(4)}) {
    INFO("subgroup " << limits.min_subgroup_size);
    for (int32_t q_len : {1, 2, 100})
      for (bool absorbed : {false, true}) {
        INFO("q_len " << q_len << (absorbed ? " absorbed" : " naive"));
        const mla::MlaStages st = deepseek_v3(1, q_len, 1000, absorbed);  // naive f32 K: 98 MB, within lavapipe's 128 MiB
        for (DType dt : {DType::f32, DType::bf16}) {
          const vulkan::attn::Plan a = vulkan::attn::plan_portable(st.attention, dt, limits);
          INFO(a.unsupported);
          REQUIRE(a.unsupported.empty());
          // Partials are as wide as O, not as K.
          CHECK(a.partial_stride >= static_cast<uint32_t>(st.attention.v_head_dim));
          CHECK(a.partial_stride < static_cast<uint32_t>(st.attention.v_head_dim) + 32);
          for (const auto& p : absorbed ? std::vector{st.absorb_q, st.project_out} : std::vector{st.decompress_k, st.decompress_v})
            CHECK(vulkan::proj::plan_projection(p, dt, limits).unsupported.empty());
        }
      }
  }
  // Any V width up to 1024 beside any key width, as its own rows or as the keys' prefix.
  for (const DeviceLimits& limits : {test::h200_limits(), test::lavapipe_limits(4)})
    for (int32_t d = 8; d <= 1024; d += 56)
      for (int32_t dv : {1, d / 2 + 1, d, 1024 - d + 1})
        for (int32_t q_len : {1, 300}) {
          attention::AttentionParams a = deepseek_v3(1, q_len, 300, true).attention;
          a.q_heads = a.group = 8;
          a.head_dim = d;
          a.v_head_dim = dv;
          a.v_stride = dv <= d ? d : dv;
          INFO("head_dim " << d << " v_head_dim " << dv << " q_len " << q_len << " subgroup " << limits.min_subgroup_size);
          const vulkan::attn::Plan p = vulkan::attn::plan_portable(a, DType::f32, limits);
          INFO(p.unsupported);
          CHECK(p.unsupported.empty());
        }
  // The cooperative-matrix kernel holds V tiles as wide as K's: it refuses, naming why.
  const mla::MlaStages naive = deepseek_v3(1, 4096, 4096, false);
  const vulkan::attn::Plan cm = vulkan::attn::plan_coopmat_nv(naive.attention, DType::f16, test::h200_limits(), "prefill");
  CHECK_THAT(cm.unsupported, Catch::Matchers::Contains("v_head_dim=128"));
  // A decode projection: one row, a short wide tile; a cache: full 64-row tiles, 4x4 per thread.
  const vulkan::proj::Plan one = vulkan::proj::plan_projection(deepseek_v3(4, 1, 4096, true).absorb_q, DType::bf16, test::h200_limits());
  CHECK(one.constants[2] == 1);
  CHECK(one.push.plan.groups == 4 * 128 * 8);
  const vulkan::proj::Plan cache = vulkan::proj::plan_projection(naive.decompress_k, DType::bf16, test::h200_limits());
  CHECK(cache.constants[2] == 64);
  CHECK(cache.constants[5] * cache.constants[6] == 16);
}

#endif
