// The Vulkan attention plans (impls/vulkan/attention/attention_plan.cpp) for the H200: decode
// split across the SMs, f16 prefill on cooperative matrices, bf16 prefill on the portable tiled
// kernel; and a portable plan for every head_dim on the H200 and on lavapipe at both subgroup sizes;
// on lavapipe, splits short enough for llvmpipe's loop limiter, even when one split is forced; and
// gathered keys and key bias on the portable kernels only.
#include <catch2/catch.hpp>

#include <cmath>

#include "support.h"
#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

#include "impls/vulkan/attention/attention_plan.h"

using namespace attnbench;

namespace {

attention::AttentionParams shape(int32_t b, int32_t hq, int32_t hkv, int32_t d, int32_t q, int32_t kv, bool causal) {
  attention::AttentionParams s{b, hq, hkv, hq / hkv, d, q, kv, causal, 0, static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))};
  s.v_head_dim = s.v_stride = d;
  return s;
}

}  // namespace

TEST_CASE("the H200 plans: split decode across the SMs, cooperative-matrix f16 prefill", "[unit]") {
  const DeviceLimits h200 = test::h200_limits();
  // Headline decode: 128 (batch, KV head) pairs split so every SM has work.
  const auto dec = vulkan::attn::plan_portable(shape(16, 32, 8, 128, 1, 8192, true), DType::bf16, h200);
  REQUIRE(dec.unsupported.empty());
  CHECK(dec.shader == "attention_decode");
  CHECK(dec.push.plan.groups >= 4 * 132);
  CHECK(dec.push.plan.splits * dec.push.plan.split_len >= 8192);
  CHECK(dec.shared_bytes <= 49152);
  // Headline prefill: 64-row blocks on the tensor cores, one split (4096 workgroups already).
  const auto pre = vulkan::attn::plan_coopmat_nv(shape(2, 32, 32, 128, 4096, 4096, true), DType::f16, h200, "prefill");
  REQUIRE(pre.unsupported.empty());
  CHECK(pre.shader == "attention_prefill_coopmat_nv");
  CHECK(pre.push.plan.splits == 1);
  CHECK(pre.push.plan.groups == 2 * 32 * 64);
  CHECK(pre.shared_bytes <= 49152);
  CHECK(pre.constants[4] == 16);  // 16x16x16 preferred
  // bf16 prefill has no cooperative-matrix path (NV v1): the portable tiled kernel serves it.
  CHECK(!vulkan::attn::plan_coopmat_nv(shape(2, 32, 8, 128, 4096, 4096, true), DType::bf16, h200, "prefill").unsupported.empty());
  const auto tiled = vulkan::attn::plan_portable(shape(2, 32, 8, 128, 4096, 4096, true), DType::bf16, h200);
  CHECK(tiled.shader == "attention_prefill");
  // Every head_dim 1..512 has a portable plan, on the H200 and on lavapipe's 32 KiB.
  for (uint32_t sg : {8u, 4u}) {
    const DeviceLimits lavapipe = test::lavapipe_limits(sg);
    for (int32_t d = 1; d <= 512; ++d)
      for (int32_t q : {1, 300}) {
        INFO("head_dim " << d << " q_len " << q << " subgroup " << sg);
        CHECK(vulkan::attn::plan_portable(shape(1, 8, 2, d, q, 300, true), DType::f16, h200).unsupported.empty());
        CHECK(vulkan::attn::plan_portable(shape(1, 8, 2, d, q, 300, true), DType::f32, lavapipe).unsupported.empty());
      }
  }
}

// llvmpipe ends an invocation's loops after 65535 iterations in all: with one split, the tiled kernel
// (16 query rows of head_dim 128 per KV head) returned attention over the first 10,576 keys of
// 12,000 or more, head_dim 256 over 4,984 and head_dim 64 over 13,784; the split-KV decode kernel
// (8 rows of head_dim 128) ran all 32,768 (measured on this machine's Mesa 22.3 with
// `vulkan.splits=1`). The plans keep every split below what the driver ran, even when forced.
TEST_CASE("on llvmpipe no attention split walks more keys than the loop limiter lets it", "[unit]") {
  struct Reach {
    int32_t q_heads, head_dim;
    uint32_t keys_run;
  };
  const Reach reach[] = {{16, 64, 13784}, {16, 128, 10576}, {16, 256, 4984}, {8, 128, 32768}};
  for (uint32_t sg : {8u, 4u})
    for (uint32_t forced : {0u, 1u}) {
      DeviceLimits lavapipe = test::lavapipe_limits(sg);
      lavapipe.forced_splits = forced;
      for (const Reach& r : reach)
        for (int32_t kv : {12000, 32768, 131072}) {
          INFO("subgroup " << sg << " forced " << forced << " q_heads " << r.q_heads << " head_dim " << r.head_dim
                           << " kv_len " << kv);
          const auto p = vulkan::attn::plan_portable(shape(1, r.q_heads, 1, r.head_dim, 1, kv, true), DType::bf16, lavapipe);
          REQUIRE(p.unsupported.empty());
          CHECK(p.shader == (r.q_heads > 8 ? "attention_prefill" : "attention_decode"));
          CHECK(p.push.plan.split_len < r.keys_run);
          CHECK(uint64_t{p.push.plan.splits} * p.push.plan.split_len >= static_cast<uint64_t>(kv));
        }
    }
  // A device without the limiter keeps one split where one is asked for.
  DeviceLimits h200 = test::h200_limits();
  h200.forced_splits = 1;
  CHECK(vulkan::attn::plan_portable(shape(1, 16, 1, 128, 1, 131072, true), DType::bf16, h200).push.plan.splits == 1);
}

// gather_decode and bias_decode (key_index, key_bias): the portable kernels take both, the split-KV
// kernel for few rows per KV head and the tiled one for many (GQA 16, or 4 queries of GQA 16), and
// the cooperative-matrix kernel refuses them, saying why. K's binding counts the cache's rows,
// not the lists'.
TEST_CASE("the Vulkan plans of gathered and biased keys", "[unit]") {
  const DeviceLimits lavapipe = test::lavapipe_limits();
  attention::AttentionParams gathered = shape(1, 8, 2, 128, 1, 700, true);
  gathered.key_index = 2;
  gathered.head_lengths = 1;
  gathered.cache_cap = 3000;
  CHECK(vulkan::attn::plan_portable(gathered, DType::bf16, lavapipe).shader == "attention_decode");
  attention::AttentionParams biased = shape(1, 16, 1, 96, 4, 900, true);
  biased.key_bias = 1;
  CHECK(vulkan::attn::plan_portable(biased, DType::bf16, lavapipe).shader == "attention_prefill");
  gathered.q_heads = 32;
  gathered.group = 16;
  CHECK(vulkan::attn::plan_portable(gathered, DType::bf16, lavapipe).shader == "attention_prefill");
  // 600k cached rows of 128 bf16 elements are 154 MB, over lavapipe's 128 MiB binding, whatever the lists hold.
  gathered.cache_cap = 600000;
  const auto big = vulkan::attn::plan_portable(gathered, DType::bf16, lavapipe);
  CHECK(big.unsupported.rfind("k is ", 0) == 0);
  const DeviceLimits h200 = test::h200_limits();
  for (const attention::AttentionParams& s : {gathered, biased}) {
    const auto nv = vulkan::attn::plan_coopmat_nv(s, DType::f16, h200, "prefill");
    CHECK(nv.unsupported.find("key_index or key_bias") != std::string::npos);
  }
}

// tree_decode (tree_mask): EAGLE-2's 61 nodes of GQA 4 are 244 packed rows, the tiled kernel; one
// node the split-KV kernel; the cooperative-matrix kernel refuses the mask, saying why.
TEST_CASE("the Vulkan plans of a tree's attention", "[unit]") {
  const DeviceLimits lavapipe = test::lavapipe_limits();
  attention::AttentionParams tree = shape(1, 32, 8, 128, 61, 4157, true);
  tree.tree_mask = 1;
  CHECK(vulkan::attn::plan_portable(tree, DType::bf16, lavapipe).shader == "attention_prefill");
  attention::AttentionParams one = shape(2, 8, 8, 64, 1, 3001, true);
  one.tree_mask = 1;
  CHECK(vulkan::attn::plan_portable(one, DType::f32, lavapipe).shader == "attention_decode");
  const auto nv = vulkan::attn::plan_coopmat_nv(tree, DType::f16, test::h200_limits(), "prefill");
  CHECK(nv.unsupported.find("tree_mask") != std::string::npos);
}

#endif
