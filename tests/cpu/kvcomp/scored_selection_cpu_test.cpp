// The KV-selection family on the CPU backend (impls/cpu/kvcomp/scored_selection_cpu.h): every
// registered kvcomp method passes its cases on both ISAs (the x86-64-v3 baseline forced with
// cpu.isa=avx2) with outputs independent of the thread count; and the shared select stage keeps
// the tie rule's set with per-row budgets and with one ranking shared by a sequence's KV heads,
// and takes a row's every candidate without reading its scores.
#include <catch2/catch.hpp>

#include "attnbench/registry.h"
#include "impls/cpu/kvcomp/kv_stages.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("every KV-selection method passes on the CPU's best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  for (const Method* m : registry().methods()) {
    if (!test::selection_method(*m)) continue;
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

TEST_CASE("the CPU select stage: per-row budgets, shared rankings, forced tokens, rows keeping none or all", "[cpu]") {
  // method_cases.h: by hand; and rows keeping none or every candidate, whose NaN scores are not read
  for (const test::SelectStageCase& t : {test::select_stage_case(), test::select_all_case()}) {
    const kvcomp::SelectionParams& s = t.s;
    const int rows = static_cast<int>(kvcomp::cache_rows(s)), cap = s.capacity;
    std::vector<int32_t> idx(rows * cap), len(rows), order(2 * s.candidates);
    for (int64_t row = 0; row < rows; ++row) cpu::kv::select_row(s, t.scores.data(), t.budgets.data(), row, order.data(), idx.data(), len.data());
    for (int row = 0; row < rows; ++row) {
      CAPTURE(rows, row);
      CHECK(std::vector<int32_t>(idx.begin() + row * cap, idx.begin() + row * cap + len[row]) == t.kept[row]);
      for (int r = len[row]; r < cap; ++r) CHECK(idx[row * cap + r] == -1);
    }
  }
}
