// The SnapKV scorer on CUDA (impls/cuda/kvcomp/snapkv_scorer_cuda.h) beyond the family's cases
// (scored_selection_cuda_test.cpp): its scoring kernels' edges — head dims off the vector paths, a
// window of one query, wide pooling, head_dim 512, a prefix too long for the select kernel's key
// cache, the Llama-3-8B shape — pass the SET check, and so do the other methods' (candidates after
// sinks off the vector paths, a ranking shared by every head, a choice across heads too long for
// the key cache, wide padded pooling); and equal scores keep the smallest indices.
#include <catch2/catch.hpp>

#include <vector>

#include "reference/kvcomp/snapkv_common.h"
#include "support.h"

using namespace attnbench;

namespace {

// Head dims off the vector paths (one dim; not a multiple of 8 for 16-bit K rows; odd), a window of
// one query, wide pooling, head_dim 512, a prefix too long for the select kernel's key cache, and
// the Llama-3-8B shape of suites/ci.json.
const std::vector<std::string> kCases = {
    "snapkv/batch=1,q_heads=6,kv_heads=3,head_dim=1,kv_len=333,obs_window=5,budget=40/f32/s7",
    "snapkv/batch=1,q_heads=4,kv_heads=2,head_dim=20,kv_len=450,obs_window=1,budget=30,pool_kernel=31/f16/s8",
    "snapkv/batch=1,q_heads=2,kv_heads=1,head_dim=37,kv_len=700,obs_window=64,budget=200,pool=avg,pool_kernel=9/bf16/s9",
    "snapkv/batch=1,q_heads=4,kv_heads=1,head_dim=512,kv_len=300,obs_window=16,budget=50/f32/s10",
    "snapkv/batch=1,q_heads=2,kv_heads=2,head_dim=64,kv_len=20000,obs_window=32,budget=2048/bf16/s11",
    "snapkv/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=4096,obs_window=64,budget=512/bf16/s12",
};

// The scorer under its other methods: candidates starting after the sinks with K rows off the
// vector paths (head_dim 20 in f16, head_dim 1), tova's one ranking of every query head (head_dim
// 37), adakv's choice across heads over 2·19968 candidates (past the select kernel's key cache),
// pyramidkv's wide avg_padded pooling.
const std::vector<std::string> kOtherMethods = {
    "sagekv/batch=1,q_heads=4,kv_heads=2,head_dim=20,kv_len=450,budget=60,n_sink=5,n_recent=16/f16/s13",
    "sagekv/batch=1,q_heads=6,kv_heads=3,head_dim=1,kv_len=333,budget=40,n_sink=3,n_recent=8/f32/s14",
    "tova/prefill/batch=1,q_heads=6,kv_heads=2,head_dim=37,kv_len=500,budget=50/bf16/s15",
    "adakv/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=20000,obs_window=32,budget=2048/bf16/s16",
    "pyramidkv/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=450,obs_window=8,budget=60,layer=2,n_layers=8,"
    "pool=avg_padded,pool_kernel=31/f32/s17",
};

}  // namespace

TEST_CASE("snapkv cuda: the scoring kernels' edges pass the SET check", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(kCases, be) == std::vector<std::string>{});
}

TEST_CASE("snapkv cuda: the scorer's edges under the other methods pass the SET check", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(kOtherMethods, be) == std::vector<std::string>{});
}

TEST_CASE("snapkv cuda: equal scores keep the smallest prefix indices", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  // Every key of a head equal to its first: every logit of a window query is the same, so every
  // prefix token scores the same, bit for bit, and the tie rule keeps 0 .. top_k − 1.
  const Case c = test::case_from_id("snapkv/batch=2,q_heads=6,kv_heads=2,head_dim=48,kv_len=600,obs_window=16,budget=80/f32/s3");
  const kvcomp::SelectionParams s = kvcomp::selection_params(c);
  TensorMap in = c.method->inputs(c);
  HostTensor& k = in.at("k");
  std::vector<double> first(s.head_dim);
  for (int64_t bg = 0; bg < kvcomp::cache_rows(s); ++bg) {
    k.get_row(bg * s.kv_len * s.head_dim, s.head_dim, first.data());
    for (int64_t j = 1; j < s.kv_len; ++j)
      for (int64_t x = 0; x < s.head_dim; ++x) k.set((bg * s.kv_len + j) * s.head_dim + x, first[x]);
  }
  const RowResult row = test::check_with_inputs(c, std::move(in), be, "radix");
  REQUIRE(test::status_and_reason(row) == "pass ");
  const HostTensor& idx = row.outputs.at("kept_idx");
  for (int64_t bg = 0; bg < kvcomp::cache_rows(s); ++bg)
    for (int64_t r = 0; r < s.capacity; ++r) {
      const int64_t want = r < s.top_k ? r : s.candidates + (r - s.top_k);
      CHECK(idx.get(bg * s.capacity + r) == static_cast<double>(want));
    }
}

