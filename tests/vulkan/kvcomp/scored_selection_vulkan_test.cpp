// The KV-selection family on Vulkan (impls/vulkan/kvcomp/scored_selection_vulkan.h): every
// registered kvcomp method passes its cases on lavapipe with the device's own splits and with
// every scoring pass forced into three, the same bits on a rerun, and the CPU backend's bits where
// the selection is exact; the shared stages' limits are refusals naming the reason; and kv_select
// keeps the tie rule's set with per-row budgets and one ranking shared by a sequence's KV heads,
// and takes a row's every candidate without reading its scores.
#include <catch2/catch.hpp>

#include "attnbench/registry.h"
#include "method_cases.h"
#include "support.h"
#include "vulkan/device_limits.h"

#if ATTNBENCH_HAS_VULKAN

#include <cstring>

#include "impls/vulkan/kvcomp/kv_stages.h"
#include "impls/vulkan/runtime/vulkan_backend.h"

using namespace attnbench;

namespace {

// Beyond the shared cases, the device code's own edges: a window longer than a scoring block
// (segments) with rows copied in 2-byte words, an MHA case in 4-byte words with avg pooling of 3,
// and rows of 66 and 36 bytes for the gather.
const std::map<std::string, std::vector<std::string>> kMoreCases = {
    {"snapkv",
     {"snapkv/batch=1,q_heads=2,kv_heads=1,head_dim=33,kv_len=400,obs_window=70,budget=150,pool_kernel=9/bf16/s7",
      "snapkv/batch=1,q_heads=3,kv_heads=3,head_dim=18,kv_len=333,obs_window=5,budget=50,pool=avg,pool_kernel=3/f16/s8"}},
    {"streaming_llm",
     {"streaming_llm/batch=1,q_heads=3,kv_heads=3,head_dim=33,kv_len=200,budget=50,n_sink=3/f16/s6",
      "streaming_llm/batch=2,q_heads=2,kv_heads=1,head_dim=9,kv_len=500,budget=499/f32/s7"}},
    {"knorm", {"knorm/batch=1,q_heads=2,kv_heads=2,head_dim=130,kv_len=700,budget=100/f16/s6"}},
    // tokenselect: a head_dim off the vector width (33, 2-byte words) whose candidates start past
    // key 0, so the statistics' splits (three, forced) begin at the first candidate.
    {"tokenselect", {"tokenselect/batch=1,q_heads=6,kv_heads=2,head_dim=33,kv_len=400,budget=150,n_init=5,pool_kernel=9/bf16/s7"}},
};

// kv_select alone on host scores [score rows, candidates] and per-row budgets: kept_idx
// [rows, capacity] and kept_len [rows].
struct Selected {
  std::vector<int32_t> idx, len;
};
Selected run_kv_select(vulkan::VulkanBackend& be, const kvcomp::SelectionParams& s, const std::vector<float>& scores,
                       const std::vector<int32_t>& budgets) {
  const int64_t rows = kvcomp::cache_rows(s);
  HostTensor sc("scores", DType::f32, {kvcomp::score_rows(s), s.candidates}), bud("row_budget", DType::i32, {rows});
  std::memcpy(sc.raw(), scores.data(), scores.size() * 4);
  std::memcpy(bud.raw(), budgets.data(), budgets.size() * 4);
  BufferPtr d_scores = be.allocator().allocate(sc.bytes(), "scores"), d_budget = be.allocator().allocate(bud.bytes(), "budget");
  BufferPtr d_idx = be.allocator().allocate(rows * s.capacity * 4, "kept_idx", BufferRole::output);
  BufferPtr d_len = be.allocator().allocate(rows * 4, "kept_len", BufferRole::output);
  be.upload(sc, *d_scores);
  be.upload(bud, *d_budget);
  const vulkan::kv::StagesPlan plan = vulkan::kv::plan_stages(s, be.probe().limits);
  REQUIRE(plan.unsupported.empty());
  auto k = be.bind(be.pipeline("kv_select", plan.select_constants, 4), {d_scores.get(), d_budget.get(), d_idx.get(), d_len.get()});
  be.dispatch(*k, plan.select, plan.select_groups);
  be.synchronize();
  HostTensor idx("kept_idx", DType::i32, {rows, s.capacity}), len("kept_len", DType::i32, {rows});
  be.download(*d_idx, idx);
  be.download(*d_len, len);
  Selected out{std::vector<int32_t>(idx.numel()), std::vector<int32_t>(rows)};
  std::memcpy(out.idx.data(), idx.raw(), idx.bytes());
  std::memcpy(out.len.data(), len.raw(), len.bytes());
  return out;
}

}  // namespace

TEST_CASE("every KV-selection method passes on Vulkan, with the device's splits and with three", "[vulkan]") {
  auto& be = test::require_backend("vulkan");
  auto& cpu = test::require_backend("cpu");
  auto split3 = test::open_backend("vulkan", {{"splits", "3"}});
  for (const Method* m : registry().methods()) {
    if (!test::selection_method(*m)) continue;
    const std::string& name = m->info().name;
    REQUIRE(test::kvcomp_cases().count(name));  // a new method brings its cases
    std::vector<std::string> ids = test::kvcomp_cases().at(name);
    if (kMoreCases.count(name)) ids.insert(ids.end(), kMoreCases.at(name).begin(), kMoreCases.at(name).end());
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
      CHECK(hashes[0] == hashes[2]);  // every sum has a fixed order, whatever the scheduling
      if (c.method->outputs(c)[0].cls == CheckClass::EXACT) CHECK(hashes[0] == test::output_hash(test::check_case(c, cpu).at(0)));
    }
  }
}

TEST_CASE("the Vulkan KV stages refuse what a device cannot bind, naming it", "[unit]") {
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
  CHECK_THAT(support("streaming_llm/batch=1,q_heads=2,kv_heads=1,head_dim=64,kv_len=100,budget=10/f16/s1", no16).reason,
             Catch::Matchers::Contains("storage16"));
}

TEST_CASE("kv_select on Vulkan: per-row budgets, shared rankings, forced tokens, the CPU stage's sets", "[vulkan]") {
  auto& be = vulkan::as_vulkan(test::require_backend("vulkan"));
  // As the CPU stage's test: 2 sequences × 3 KV heads, 2 sinks, 3 recent, 15 shared candidates
  // per sequence, per-row budgets (one over the capacity). Then 2000 candidates per row with
  // many ties and per-row rankings, against the spec's select_top_k.
  for (const int candidates : {15, 2000}) {
    CAPTURE(candidates);
    kvcomp::SelectionParams s{};
    s.batch = 2, s.q_heads = 3, s.kv_heads = 3, s.group = 1, s.head_dim = 4, s.kv_len = candidates + 5;
    s.capacity = candidates == 15 ? 12 : 700, s.sinks = 2, s.recent = 3, s.candidates = candidates;
    s.shared_scores = candidates == 15, s.row_budgets = 1, s.elem_bytes = 2;
    const int64_t rows = 6, score_rows = kvcomp::score_rows(s);
    std::vector<float> scores(score_rows * candidates);
    for (size_t i = 0; i < scores.size(); ++i) scores[i] = static_cast<float>((i * 7919) % 13) * 0.5f;
    const std::vector<int32_t> budgets =
        candidates == 15 ? std::vector<int32_t>{5, 8, 13, 6, 7, 12} : std::vector<int32_t>{5, 100, 701, 699, 350, 6};
    const Selected got = run_kv_select(be, s, scores, budgets);
    std::vector<int32_t> order(candidates), top(candidates);
    for (int64_t row = 0; row < rows; ++row) {
      CAPTURE(row);
      const int32_t n = std::clamp(budgets[row], 5, std::min(s.kv_len, s.capacity)), k_row = n - 5;
      REQUIRE(got.len[row] == n);
      kvcomp::select_top_k(scores.data() + kvcomp::score_row_of(s, row) * candidates, candidates, k_row, order.data(), top.data());
      for (int32_t r = 0; r < s.capacity; ++r) {
        const int32_t want = r < 2 ? r : r < 2 + k_row ? 2 + top[r - 2] : r < n ? s.kv_len - (n - r) : -1;
        if (got.idx[row * s.capacity + r] != want) FAIL("position " << r << ": " << got.idx[row * s.capacity + r] << " != " << want);
      }
    }
  }
}

TEST_CASE("kv_select on Vulkan: rows keeping none or every candidate read no score", "[vulkan]") {
  auto& be = vulkan::as_vulkan(test::require_backend("vulkan"));
  const test::SelectStageCase t = test::select_all_case();  // method_cases.h: NaN scores
  const Selected got = run_kv_select(be, t.s, t.scores, t.budgets);
  for (int row = 0; row < 3; ++row) {
    CAPTURE(row);
    CHECK(std::vector<int32_t>(got.idx.begin() + row * 20, got.idx.begin() + row * 20 + got.len[row]) == t.kept[row]);
    for (int r = got.len[row]; r < 20; ++r) CHECK(got.idx[row * 20 + r] == -1);
  }
}

#endif
