// sampling on the CPU backend: the shared cases on both ISAs (SET kept sets, SEMI tokens, STAT in
// distribution mode), and outputs independent of the thread count; then the stage's processors:
// epsilon, eta, typical and top_h on their shared cases, gumbel_topk's draw of k tokens and
// arithmetic_sampling's codes.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("sampling cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kSamplingCases) == std::vector<std::string>{});
}

TEST_CASE("sampling cpu: outputs do not depend on the thread count", "[cpu]") {
  test::require_backend("cpu");
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const std::string& id : {test::kSamplingCases[0], test::kSamplingCases[8], test::kSamplingCases[11]}) {
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, *one).at(0)) == test::output_hash(test::check_case(c, *three).at(0)));
  }
}

TEST_CASE("epsilon cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kEpsilonCases) == std::vector<std::string>{});
}

TEST_CASE("eta cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kEtaCases) == std::vector<std::string>{});
}

TEST_CASE("typical cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kTypicalCases) == std::vector<std::string>{});
}

TEST_CASE("top_h cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kTopHCases) == std::vector<std::string>{});
}

TEST_CASE("gumbel_topk cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kGumbelTopKCases) == std::vector<std::string>{});
}

TEST_CASE("arithmetic_sampling cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(test::kArithmeticCases) == std::vector<std::string>{});
}
