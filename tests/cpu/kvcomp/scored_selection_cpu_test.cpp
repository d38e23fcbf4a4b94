// The KV-selection family on the CPU backend (impls/cpu/kvcomp/scored_selection_cpu.h): every
// registered kvcomp method passes its cases on both ISAs (the x86-64-v3 baseline forced with
// cpu.isa=avx2) with outputs independent of the thread count; and the shared select stage keeps
// the tie rule's set with per-row budgets and with one ranking shared by a sequence's KV heads.
#include <catch2/catch.hpp>

#include "attnbench/registry.h"
#include "impls/cpu/kvcomp/kv_stages.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("every KV-selection method passes on the CPU's best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  for (const Method* m : registry().methods()) {
    if (m->info().family != "kvcomp") continue;
    INFO(m->info().name);
    REQUIRE(test::kvcomp_cases().count(m->info().name));  // a new method brings its cases
    CHECK(test::cpu_rows_not_passing(test::kvcomp_cases().at(m->info().name)) == std::vector<std::string>{});
  }
}

TEST_CASE("KV-selection outputs on the CPU do not depend on the thread count", "[cpu]") {
  test::require_backend("cpu");
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const auto& [method, ids] : test::kvcomp_cases())
    for (const std::string& id : {ids[0], ids[1]}) {
      INFO(id);
      const Case c = test::case_from_id(id);
      CHECK(test::output_hash(test::check_case(c, *one).at(0)) == test::output_hash(test::check_case(c, *three).at(0)));
    }
}

TEST_CASE("the CPU select stage: per-row budgets, shared rankings, forced tokens", "[cpu]") {
  // Two sequences × three KV heads of 20 tokens: 2 sinks, 3 recent, 15 candidates scored per
  // sequence (shared), each row keeping its own number of tokens (one more than it may: clamped).
  kvcomp::SelectionParams s{};
  s.batch = 2, s.q_heads = 3, s.kv_heads = 3, s.group = 1, s.head_dim = 4, s.kv_len = 20, s.capacity = 12;
  s.sinks = 2, s.recent = 3, s.candidates = 15, s.shared_scores = 1, s.row_budgets = 1, s.elem_bytes = 2;
  const std::vector<float> scores = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9,   // sequence 0 (ties at 9, 5)
                                     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // sequence 1: all equal
  const std::vector<int32_t> budgets = {5, 8, 13, 6, 7, 12};
  std::vector<int32_t> idx(6 * 12), len(6), order(30);
  for (int64_t row = 0; row < 6; ++row) cpu::kv::select_row(s, scores.data(), budgets.data(), row, order.data(), idx.data(), len.data());
  const auto kept = [&](int row) { return std::vector<int32_t>(idx.begin() + row * 12, idx.begin() + row * 12 + len[row]); };
  CHECK(kept(0) == std::vector<int32_t>{0, 1, 17, 18, 19});             // no candidate
  CHECK(kept(1) == std::vector<int32_t>{0, 1, 7, 14, 16, 17, 18, 19});  // the three 9s (candidates 5, 12, 14)
  CHECK(len[2] == 12);                                                   // 13 clamped to the capacity
  CHECK(kept(3) == std::vector<int32_t>{0, 1, 2, 17, 18, 19});          // all equal: the first candidate
  CHECK(kept(5) == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 17, 18, 19});
  for (int r = len[0]; r < 12; ++r) CHECK(idx[r] == -1);
}
