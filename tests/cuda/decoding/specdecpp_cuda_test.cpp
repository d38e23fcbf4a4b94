// specdecpp on CUDA: the shared cases (tests/method_cases.h) and the device's own edges pass; outputs
// are the same run to run; and a threshold of 1 verifies exactly as speculative_sampling does
// (specdecpp_checks.h): both run the chain verification stage, one with the stopping rule's lengths
// on the device, one without.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "method_cases.h"
#include "specdecpp_checks.h"
#include "support.h"

using namespace attnbench;

namespace {

// The shared cases, then: a hidden size and a vocabulary that are not multiples of 4 (no float4
// path in the head), many rows of a small vocabulary (one race span per row, so no finish kernel,
// with lengths), and 64 drafts a row whose stops fall anywhere in them.
std::vector<std::string> specdecpp_cases() {
  std::vector<std::string> v = test::kSpecDecPPCases;
  v.insert(v.end(), {
      "specdecpp/batch=3,draft_len=7,hidden=1001,vocab=333,threshold=0.2/f32/s11",
      "specdecpp/batch=600,draft_len=4,min_draft_len=1,hidden=32,vocab=64,threshold=0.1/f32/s12",
      "specdecpp/batch=3,draft_len=64,min_draft_len=1,vocab=1021,head=oracle,threshold=0.9,dist=flat/f32/s13",
  });
  return v;
}

}  // namespace

TEST_CASE("specdecpp cuda: passes the shared cases and the device's edges", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(specdecpp_cases(), be) == std::vector<std::string>{});
}

TEST_CASE("specdecpp cuda: outputs are the same run to run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  for (const std::string& id : {test::kSpecDecPPCases[0], test::kSpecDecPPCases[2]}) {
    CAPTURE(id);
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
  }
}

TEST_CASE("specdecpp cuda: never stopping early verifies as speculative_sampling does", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::specdecpp_chain_mismatches(be, "race") == std::vector<std::string>{});
}
