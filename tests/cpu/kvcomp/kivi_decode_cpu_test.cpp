// kivi_decode on the CPU (impls/cpu/kvcomp/kivi_kernel.inl): the fused kernel passes its cases on
// the best ISA and on the AVX2 baseline, and its outputs do not depend on the thread count.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("kivi_decode passes on the CPU's best ISA and on the AVX2 baseline", "[cpu]") {
  CHECK(test::cpu_rows_not_passing(test::kKiviDecodeCases).empty());
}

TEST_CASE("kivi_decode on the CPU does not depend on the thread count", "[cpu]") {
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const std::string& id : {test::kKiviDecodeCases[0], test::kKiviDecodeCases[4]}) {
    INFO(id);
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, *one).at(0)) == test::output_hash(test::check_case(c, *three).at(0)));
  }
}
