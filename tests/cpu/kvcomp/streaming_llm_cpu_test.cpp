// streaming_llm on the CPU backend: passes the EXACT checks on both ISAs, edge cases included, and
// its outputs do not depend on the thread count.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

namespace {
const std::vector<std::string>& kCases = test::kStreamingLlmCases;
}  // namespace

TEST_CASE("streaming_llm cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(kCases) == std::vector<std::string>{});
}

TEST_CASE("streaming_llm cpu: outputs do not depend on the thread count", "[cpu]") {
  test::require_backend("cpu");
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const std::string& id : {kCases[0], kCases[1]}) {
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, *one).at(0)) == test::output_hash(test::check_case(c, *three).at(0)));
  }
}
