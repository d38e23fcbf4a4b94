// zeromerge (the prefill init) on CUDA (impls/cuda/kvcomp/zeromerge_cuda.cpp, variant "radix": the
// SnapKV scorer with its decay, then the family's stages and the merge stage of kv_stages.cu): the
// shared cases pass, the same bits on a rerun; the merge stage's and the decay's edges beyond them
// pass; and the merged slots equal, bit for bit, the fp32 means of the groups of the impl's own
// kept set (merged_slots.h's fp32 baseline: a running sum in order, divided by the size).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "method_cases.h"
#include "reference/kvcomp/merged_slots.h"
#include "reference/kvcomp/scored_selection_common.h"
#include "support.h"

using namespace attnbench;

namespace {

// Beyond the shared cases:
// - head_dim 20 in f16 (rows not made of 16-byte words: the merge's element path, 40 units);
// - head_dim 150 in f16 (the element path, 300 units: two passes of a 256-thread CTA);
// - head_dim 1 in f32 with 5 dense slots and sequences of 3 heads;
// - one dense slot over a 1500-token prompt in f32 (a group of ~1440 tokens: many chunks of the
//   CTA's token list), the vector path with 16-byte words of 4 floats;
// - decay 0.5: the early queries' weights underflow fp32 (count 0), the last ones dominate;
// - decay 1: no decay (log_decay 0, every weight exactly 1).
const std::vector<std::string> kZeromergeInitCudaEdges = {
    "zeromerge/batch=1,q_heads=4,kv_heads=2,head_dim=20,kv_len=450,budget=60,dense=3/f16/s21",
    "zeromerge/batch=1,q_heads=2,kv_heads=1,head_dim=150,kv_len=400,budget=50,dense=2/f16/s22",
    "zeromerge/batch=2,q_heads=3,kv_heads=1,head_dim=1,kv_len=200,budget=30,tail=4,dense=5/f32/s23",
    "zeromerge/batch=1,q_heads=1,kv_heads=1,head_dim=64,kv_len=1500,budget=64/f32/s24",
    "zeromerge/batch=1,q_heads=4,kv_heads=1,head_dim=64,kv_len=600,budget=100,decay=0.5/bf16/s25",
    "zeromerge/batch=1,q_heads=4,kv_heads=2,head_dim=32,kv_len=300,budget=40,decay=1/bf16/s26",
};

}  // namespace

TEST_CASE("zeromerge cuda: the shared cases pass", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kZeromergeCases, be) == std::vector<std::string>{});
}

TEST_CASE("zeromerge cuda: the merge stage's and the decay's edges pass", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(kZeromergeInitCudaEdges, be) == std::vector<std::string>{});
}

TEST_CASE("zeromerge cuda: the same bits on every run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  const Case c = test::case_from_id(test::kZeromergeCases[1]);  // GQA 7, head_dim 80, f16
  CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
}

TEST_CASE("zeromerge cuda: the merged slots are the fp32 means of the impl's groups, bit for bit", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  // bf16 and f32 16-byte words, f16 elements in two passes, empty groups (a prompt within the budget).
  for (const std::string& id : {test::kZeromergeCases[0], test::kZeromergeCases[2], test::kZeromergeCases[4],
                                kZeromergeInitCudaEdges[1]}) {
    CAPTURE(id);
    const Case c = test::case_from_id(id);
    const RowResult row = test::check_with_inputs(c, c.method->inputs(c), be, "radix");
    REQUIRE(test::status_and_reason(row) == "pass ");
    const TensorMap in = c.method->inputs(c);  // the same inputs again (a function of the case)
    const int64_t M = kvcomp::merged_slots(c);
    const TensorMap want = kvcomp::merge_evicted(kvcomp::selection_params(c), M, in, row.outputs.at("kept_idx"),
                                                 row.outputs.at("kept_len"), true, c.dtype);
    for (const char* name : {"k_merged", "v_merged", "w_merged"}) {
      CAPTURE(name);
      const HostTensor &w = want.at(name), &got = row.outputs.at(name);
      REQUIRE(got.numel() == w.numel());
      int64_t mismatches = 0;
      for (int64_t i = 0; i < w.numel(); ++i) mismatches += got.get(i) != w.get(i);
      CHECK(mismatches == 0);
    }
  }
}
