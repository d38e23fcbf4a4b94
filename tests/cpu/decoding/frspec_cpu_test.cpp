// frspec on the CPU backend: the shared cases (TOL head logits and q, SEMI drafts and chain, STAT in
// distribution mode) on both ISAs, and outputs independent of the thread count.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("frspec cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kFrspecCases) == std::vector<std::string>{});
}

TEST_CASE("frspec cpu: outputs do not depend on the thread count", "[cpu]") {
  test::require_backend("cpu");
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const std::string& id : {test::kFrspecCases[0], test::kFrspecCases[5]}) {
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, *one).at(0)) == test::output_hash(test::check_case(c, *three).at(0)));
  }
}
