// tree_verify on CUDA: the shared cases (greedy EXACT, typical SEMI): EAGLE-2's 61-node trees over
// 32000 tokens, a chain, a star, disjoint drafts (short paths), ties and one-hot targets (the
// lowest-index argmax), flat and bimodal targets, 128256 tokens. Of their vocabularies only 999 is
// off a multiple of 4 (rows starting off a 16-byte boundary: the scalar head and tail beside the
// float4 body); two more such cases here take both modes through them, one with a vocabulary
// smaller than a warp's float4s. The stochastic modes (the walk kernel): the shared cases, a chain
// equal to speculative_sampling on this backend (tree_chain_checks.h), and vocabularies beside a
// walk CTA's width.
#include <catch2/catch.hpp>

#include "method_cases.h"
#include "support.h"
#include "tree_chain_checks.h"

using namespace attnbench;

TEST_CASE("tree_verify cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kTreeVerifyCases, be) == std::vector<std::string>{});
}

TEST_CASE("tree_verify cuda: unaligned rows in both modes", "[cuda]") {
  auto& be = test::require_backend("cuda");
  const std::vector<std::string> cases = {
      "tree_verify/batch=3,nodes=20,max_depth=5,vocab=4093,mode=typical/f32/s11",
      "tree_verify/batch=3,nodes=20,max_depth=5,vocab=4093,dist=peaked,draft=equal/f32/s12",
      "tree_verify/batch=2,nodes=9,max_depth=4,vocab=61,mode=typical,dist=flat,draft=equal/f32/s13",
  };
  CHECK(test::rows_not_passing(cases, be) == std::vector<std::string>{});
}

TEST_CASE("tree_verify cuda: a chain verifies as speculative_sampling does", "[cuda]") {
  CHECK(test::tree_chain_mismatches(test::require_backend("cuda")) == std::vector<std::string>{});
}

// 513 tokens, one past a warp's 16 a thread: two warps, thread 0 with one token more than the rest;
// 9 tokens: most of the warp idle in every pass and reduction.
TEST_CASE("tree_verify cuda: stochastic rows at the walk CTA's edges", "[cuda]") {
  auto& be = test::require_backend("cuda");
  const std::vector<std::string> cases = {
      "tree_verify/batch=3,nodes=20,max_depth=5,vocab=513,mode=rejection_wor,draft=independent/f32/s21",
      "tree_verify/batch=3,nodes=20,max_depth=5,vocab=513,mode=rejection,dist=flat,draft=independent/f32/s22",
      "tree_verify/batch=2,nodes=9,max_depth=3,vocab=9,mode=rejection_wor,dist=bimodal,draft=independent/f32/s23",
  };
  CHECK(test::rows_not_passing(cases, be) == std::vector<std::string>{});
}
