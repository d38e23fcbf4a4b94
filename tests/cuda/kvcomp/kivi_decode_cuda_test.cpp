// kivi_decode on CUDA (impls/cuda/kvcomp/kivi_decode.cuh, variant "fused"): the shared cases (GQA
// groups of 1 to 16 rows, head_dim 64, 80 and 128, 2 and 4 bits, ragged lengths with empty
// sequences, one-key and all-window sequences; most of them split the keys, so the combine runs),
// the kernel's own edges, the same bits on a rerun, and the head dims it refuses.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attnbench/registry.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;

namespace {

// The kernel's edges beyond the shared cases:
// - enough (sequence, KV head) pairs (1728) that the keys are not split, ragged lengths up to four
//   warp tiles, so the CTA merges several warps' softmax states (8-row tile, head_dim 16: four
//   lanes per token in the value phase, two of them per channel chunk);
// - head_dim 256 (32 lanes per token) in the 2-row tile, 2-bit groups of 64;
// - one row per KV head (the 1-row tile) over ragged lengths up to three tiles, head_dim 16;
// - a group of 12 in two blocks of 6 rows (the 8-row tile with rows left over), 4-bit groups of 32
//   and a 96-key window.
const std::vector<std::string> kEdgeCases = {
    "kivi_decode/decode/batch=64,q_heads=216,kv_heads=27,head_dim=16,kv_len=400,group_size=16,residual=32,ragged=true/f16/s7",
    "kivi_decode/decode/batch=2,q_heads=4,kv_heads=2,head_dim=256,kv_len=900,group_size=64,residual=64/bf16/s8",
    "kivi_decode/decode/batch=3,q_heads=2,kv_heads=2,head_dim=16,kv_len=1300,group_size=16,residual=16,ragged=true/f16/s9",
    "kivi_decode/decode/batch=1,q_heads=24,kv_heads=2,head_dim=128,kv_len=700,bits=4,residual=96/bf16/s10",
};

}  // namespace

TEST_CASE("kivi_decode cuda: the shared cases pass", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kKiviDecodeCases, be).empty());
}

TEST_CASE("kivi_decode cuda: the kernel's edges pass", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(kEdgeCases, be) == std::vector<std::string>{});
}

TEST_CASE("kivi_decode cuda: the same bits on every run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  const Case c = test::case_from_id(test::kKiviDecodeCases[1]);  // ragged, split keys
  CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
}

TEST_CASE("kivi_decode cuda: rows wider than 256 are refused", "[unit]") {
  const Case c = test::case_from_id("kivi_decode/decode/batch=1,q_heads=4,kv_heads=1,head_dim=512,kv_len=300/bf16/s1");
  int asked = 0;
  for (const ImplEntry* e : registry().impls(c.method_name(), "cuda")) {
    if (e->variant != "fused") continue;
    const Support s = e->make()->supports(c, DeviceLimits{});
    CHECK_FALSE(s.ok);
    CHECK(s.reason.find("head_dim=512") == 0);
    ++asked;
  }
  if (registry().find_backend("cuda")) CHECK(asked == 1);
}
