// zeromerge_decode on CUDA (impls/cuda/kvcomp/zeromerge_decode.cu, variant "rows"): the shared
// cases (Llama's widths filling then merging, GQA 7 at head_dim 80 with a ring of one slot, the l2
// metric and summed scores, many dense slots, f32 over a long prompt, MHA rows), the kernel's own
// edges, the same bits on a rerun, and the shapes it refuses.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attnbench/registry.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;

namespace {

// The kernel's edges beyond the shared cases:
// - head_dim 256 in bf16 with a group of 8 (a warp per key, every warp's softmax busy), 300 slots
//   and 20 dense ones: the logits and the nearest dense slot take several passes of the CTA's keys;
// - head_dim 512 in f32 (128 chunks: four per lane, two value groups) over MHA rows, and in bf16
//   with a group of 8 (the most shared memory, 82 KiB);
// - head_dim 16 in f16 (two lanes per key, 128 value groups) with a group of 3 and 600 slots:
//   the scores and the argmin stride past the CTA's 256 threads, 100 appends before the merges;
// - head_dim 4 in f32 (a lane per key, no shuffle) with the l2 metric, summed scores and a
//   stronger compensation.
const std::vector<std::string> kZeromergeDecodeCudaEdges = {
    "zeromerge_decode/decode/batch=1,q_heads=16,kv_heads=2,head_dim=256,kv_len=400,budget=300,dense=20,steps=40/bf16/s11",
    "zeromerge_decode/decode/batch=2,q_heads=1,kv_heads=1,head_dim=512,kv_len=120,budget=64,dense=3,steps=30/f32/s12",
    "zeromerge_decode/decode/batch=1,q_heads=8,kv_heads=1,head_dim=512,kv_len=64,budget=48,dense=2,steps=20/bf16/s15",
    "zeromerge_decode/decode/batch=1,q_heads=6,kv_heads=2,head_dim=16,kv_len=500,budget=600,dense=5,steps=150/f16/s13",
    "zeromerge_decode/decode/batch=2,q_heads=2,kv_heads=1,head_dim=4,kv_len=64,budget=48,tail=5,dense=6,steps=60,metric=l2,"
    "score_update=sum,lambda=3/f32/s14",
};

}  // namespace

TEST_CASE("zeromerge_decode cuda: the shared cases pass", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kZeromergeDecodeCases, be) == std::vector<std::string>{});
}

TEST_CASE("zeromerge_decode cuda: the kernel's edges pass", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(kZeromergeDecodeCudaEdges, be) == std::vector<std::string>{});
}

TEST_CASE("zeromerge_decode cuda: the same bits on every run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  const Case c = test::case_from_id(test::kZeromergeDecodeCases[4]);  // three sequences, 257 steps
  CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
}

TEST_CASE("zeromerge_decode cuda: groups past 8 and rows not made of 16-byte chunks are refused", "[unit]") {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"zeromerge_decode/decode/batch=1,q_heads=16,kv_heads=1,head_dim=64,kv_len=100,budget=64/bf16/s1", "group=16"},
      {"zeromerge_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=36,kv_len=100,budget=64/f16/s1", "head_dim=36"},
      {"zeromerge_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=6,kv_len=100,budget=64/f32/s1", "head_dim=6"},
  };
  int asked = 0;
  for (const auto& [id, reason] : refused) {
    const Case c = test::case_from_id(id);
    for (const ImplEntry* e : registry().impls(c.method_name(), "cuda")) {
      if (e->variant != "rows") continue;
      const Support s = e->make()->supports(c, DeviceLimits{});
      CHECK_FALSE(s.ok);
      CHECK(s.reason.find(reason) == 0);
      ++asked;
    }
  }
  if (registry().find_backend("cuda")) CHECK(asked == 3);
}
