// zeromerge (ZeroMerge's prefill init) on Vulkan (impls/vulkan/kvcomp/zeromerge_vulkan.cpp): the
// SnapKV scorer with its decay (snapkv_scores MODE 1 weights each query's probabilities) and the
// family's merge stage (kv_merge.comp) after the gather. The shared cases and the shader's own
// edges pass with the device's plan and with vulkan.splits=3 (the scorer's key splits and the
// merge in three passes over each group, the running sums carried between them), the same bits on
// a rerun; the merge's plan cuts long groups into passes under lavapipe's loop cap and keeps one
// on a GPU; the scorer's push block stays within 128 bytes.
#include <catch2/catch.hpp>

#include "support.h"
#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

#include <cstring>

#include "attnbench/execute.h"
#include "impls/vulkan/kvcomp/kv_stages.h"
#include "impls/vulkan/kvcomp/snapkv_plan.h"
#include "method_cases.h"

using namespace attnbench;

namespace {

// head_dim 33 in f16 (one channel a lane, most lanes of the second subgroup idle); head_dim 200 in
// bf16 (two channels a lane) with a steep decay whose early queries' weights underflow fp32 to 0,
// two sequences and seven dense slots; MHA rows in f32 with one slot per row.
const std::vector<std::string> kZeromergeVulkanEdges = {
    "zeromerge/batch=1,q_heads=2,kv_heads=1,head_dim=33,kv_len=300,budget=40,dense=3/f16/s6",
    "zeromerge/batch=2,q_heads=4,kv_heads=2,head_dim=200,kv_len=260,budget=100,tail=5,dense=7,decay=0.5/bf16/s9",
    "zeromerge/batch=1,q_heads=3,kv_heads=3,head_dim=16,kv_len=222,budget=30,tail=3/f32/s10",
};

}  // namespace

TEST_CASE("zeromerge vulkan: the shared cases and the merge's edges pass", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  CHECK(test::rows_not_passing(test::kZeromergeCases, vk) == std::vector<std::string>{});
  CHECK(test::rows_not_passing(kZeromergeVulkanEdges, vk) == std::vector<std::string>{});
}

TEST_CASE("zeromerge vulkan: the same cases with three key splits and three merge passes", "[vulkan]") {
  auto split3 = test::open_backend("vulkan", {{"splits", "3"}});
  CHECK(test::rows_not_passing(test::kZeromergeCases, *split3, " splits=3") == std::vector<std::string>{});
  CHECK(test::rows_not_passing(kZeromergeVulkanEdges, *split3, " splits=3") == std::vector<std::string>{});
}

TEST_CASE("zeromerge vulkan: the same bits on every run, and from one merge pass or three", "[vulkan]") {
  Backend& vk = test::require_backend("vulkan");
  auto split3 = test::open_backend("vulkan", {{"splits", "3"}});
  const auto same_bytes = [](const HostTensor& a, const HostTensor& b) {
    return a.bytes() == b.bytes() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
  };
  for (const std::string& id : {test::kZeromergeCases[0], test::kZeromergeCases[4], kZeromergeVulkanEdges[1]}) {
    INFO(id);
    const Case c = test::case_from_id(id);
    const TensorMap inputs = prepare_case_data(c).inputs;
    const auto copy = [&] {
      TensorMap m;
      for (const auto& [name, t] : inputs) m.emplace(name, t.clone());
      return m;
    };
    const RowResult one = test::check_with_inputs(c, copy(), vk, "pooled");
    const RowResult again = test::check_with_inputs(c, copy(), vk, "pooled");
    const RowResult three = test::check_with_inputs(c, copy(), *split3, "pooled");
    REQUIRE(one.record.status == Status::pass);
    REQUIRE(three.record.status == Status::pass);
    CHECK(test::output_hash(one) == test::output_hash(again));
    // The passes resume exact fp32 sums in the tokens' order: where the scorer's other splits
    // keep the same set, the merged slots are the same bits.
    if (same_bytes(one.outputs.at("kept_idx"), three.outputs.at("kept_idx")))
      for (const char* name : {"k_merged", "v_merged", "w_merged"}) {
        INFO(name);
        CHECK(same_bytes(one.outputs.at(name), three.outputs.at(name)));
      }
  }
}

TEST_CASE("the Vulkan merge stage's passes: one on a GPU, enough under a loop cap, forced by splits", "[unit]") {
  kvcomp::SelectionParams s{};
  s.batch = 1, s.q_heads = 8, s.kv_heads = 2, s.group = 4, s.head_dim = 128, s.kv_len = 200000, s.capacity = 124;
  s.recent = 12, s.top_k = 112, s.kept = 124, s.candidates = s.kv_len - s.recent, s.elem_bytes = 2;
  const auto covered = [](const vulkan::kv::MergeStage& p, uint32_t longest) {
    // The passes tile [0, longest) of each group in order: first starts, last writes.
    uint32_t at = 0;
    for (size_t i = 0; i < p.passes.size(); ++i) {
      const vulkan::kv::MergePlan& q = p.passes[i].plan;
      if (q.pass_begin != at || q.first != (i == 0 ? 1u : 0u) || q.last != (i + 1 == p.passes.size() ? 1u : 0u)) return false;
      at += q.pass_len;
    }
    return at >= longest;
  };
  const uint32_t longest = (200000 - 12 + 3) / 4;  // M = 4: the evicted tokens at most, over M
  const vulkan::kv::MergeStage gpu = vulkan::kv::plan_merge(s, 4, DType::bf16, test::h200_limits());
  REQUIRE(gpu.unsupported.empty());
  CHECK(gpu.passes.size() == 1);
  CHECK(gpu.groups == 8);
  CHECK(covered(gpu, longest));
  const vulkan::kv::MergeStage lp = vulkan::kv::plan_merge(s, 4, DType::bf16, test::lavapipe_limits());
  REQUIRE(lp.unsupported.empty());
  CHECK(lp.passes.size() > 1);
  CHECK(covered(lp, longest));
  CHECK(lp.sums_bytes == 8 * 2 * 128 * 4);
  DeviceLimits forced = test::h200_limits();
  forced.forced_splits = 3;
  const vulkan::kv::MergeStage three = vulkan::kv::plan_merge(s, 4, DType::bf16, forced);
  CHECK(three.passes.size() == 3);
  CHECK(covered(three, longest));
  // head_dim 200 over 128 lanes: two channels a lane.
  s.head_dim = 200;
  CHECK(vulkan::kv::plan_merge(s, 4, DType::f16, test::h200_limits()).constants == std::vector<uint32_t>{128, 1, 2});
}

TEST_CASE("the SnapKV scorer's push block fits Vulkan's 128 bytes with log_decay", "[unit]") {
  STATIC_REQUIRE(sizeof(vulkan::snapkv::ScoresPush) <= 128);
  STATIC_REQUIRE(sizeof(vulkan::kv::MergePush) <= 128);
}

#endif
