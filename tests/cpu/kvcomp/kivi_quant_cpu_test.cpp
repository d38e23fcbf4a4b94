// kivi on the CPU (impls/cpu/kvcomp/kivi_quant_kernel.inl): the quantizer's cases pass (every
// output bit for bit, padding included) on the best ISA and on the AVX2 baseline, hand-made ties
// and flat groups come out as the reference's, and the outputs do not depend on the thread count.
#include <catch2/catch.hpp>

#include "kivi_quant_cases.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("kivi passes on the CPU's best ISA and on the AVX2 baseline", "[cpu]") {
  CHECK(test::cpu_rows_not_passing(test::kKiviCases).empty());
}

TEST_CASE("kivi on the CPU: ties at a half and flat groups, both roundings, both ISAs", "[cpu]") {
  auto best = test::open_backend("cpu", {});
  auto avx2 = test::open_backend("cpu", {{"isa", "avx2"}});
  CHECK(test::kivi_ties_not_passing(*best, "packed") == std::vector<std::string>{});
  CHECK(test::kivi_ties_not_passing(*avx2, "packed") == std::vector<std::string>{});
}

TEST_CASE("kivi on the CPU does not depend on the thread count", "[cpu]") {
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const std::string& id : {test::kKiviCases[1], test::kKiviCases[3]}) {
    INFO(id);
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, *one).at(0)) == test::output_hash(test::check_case(c, *three).at(0)));
  }
}
