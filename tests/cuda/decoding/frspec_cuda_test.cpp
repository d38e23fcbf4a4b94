// frspec on CUDA (variant subset_head): the shared cases (TOL head logits and q, SEMI drafts and
// chain, STAT in distribution mode) through the head, softmax and draft kernels and
// speculative_sampling's stage, and the same bits on every run.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("frspec cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kFrspecCases, be) == std::vector<std::string>{});
}

TEST_CASE("frspec cuda: the same bits on every run", "[cuda]") {
  auto& be = test::require_backend("cuda");
  const Case c = test::case_from_id(test::kFrspecCases[0]);
  CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
}
