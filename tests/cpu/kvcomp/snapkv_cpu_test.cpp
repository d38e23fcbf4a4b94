// snapkv on the CPU backend: every variant passes the SET check on both ISAs (the x86-64-v3
// baseline forced with cpu.isa=avx2), edge cases included, and the outputs do not depend on the
// thread count.
#include <catch2/catch.hpp>

#include "reference/kvcomp/snapkv_cases.h"
#include "support.h"

using namespace attnbench;

namespace {

std::string output_hash(const RowResult& row) { return row.record["hashes"]["outputs"].get<std::string>(); }

}  // namespace

TEST_CASE("snapkv cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing({std::begin(test::kSnapkvCases), std::end(test::kSnapkvCases)}) == std::vector<std::string>{});
}

TEST_CASE("snapkv cpu: outputs do not depend on the thread count", "[cpu]") {
  test::require_backend("cpu");
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const char* id : {test::kSnapkvCases[0], test::kSnapkvCases[2]}) {
    const Case c = test::case_from_id(id);
    CHECK(output_hash(test::check_case(c, *one).at(0)) == output_hash(test::check_case(c, *three).at(0)));
  }
}
