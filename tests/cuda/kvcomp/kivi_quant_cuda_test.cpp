// kivi on CUDA (impls/cuda/kvcomp/kivi_quant.cu, variant "packed"): the quantizer's cases (2 and 4
// bits, groups of 16 to 64, head_dim 32 to 128, ragged batches, nothing quantized), every output
// bit for bit with its padding; hand-made ties at a half, flat groups and an f16 scale that
// underflows, in both roundings; the same bits on a rerun.
#include <catch2/catch.hpp>

#include <string>

#include "kivi_quant_cases.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("kivi cuda: the shared cases pass", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kKiviCases, be).empty());
}

TEST_CASE("kivi cuda: ties at a half and flat groups, both roundings", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::kivi_ties_not_passing(be, "packed") == std::vector<std::string>{});
}

TEST_CASE("kivi cuda: the same bits on every run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  const Case c = test::case_from_id(test::kKiviCases[1]);
  CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
}
