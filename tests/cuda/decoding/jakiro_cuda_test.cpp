// jakiro on CUDA (variant staged): the shared cases (router, features and logits TOL, the tree
// EXACT over the impl's own logits), an odd shape (a width off every vector and warp multiple, a
// single projection row tile, bf16), and the same bits on every run (no atomics anywhere).
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("jakiro cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kJakiroCases, be) == std::vector<std::string>{});
}

TEST_CASE("jakiro cuda: an odd shape passes, with the same bits on every run", "[cuda]") {
  auto& be = test::require_backend("cuda");
  const std::string id = "jakiro/batch=1,top_k=2,depth=3,total_tokens=5,hidden=37,vocab=101/bf16/s7";
  CHECK(test::rows_not_passing({id}, be) == std::vector<std::string>{});
  const Case c = test::case_from_id(id);
  CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
}
