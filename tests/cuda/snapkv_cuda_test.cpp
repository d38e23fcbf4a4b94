// snapkv on CUDA: cases across dtypes, head dims, pooling, GQA ratios and the edges pass the SET
// check; outputs are the same run to run; equal scores keep the smallest indices; and the select
// kernel alone keeps exactly the spec's select_top_k on adversarial scores (duplicates, ±0,
// negatives, subnormals), with and without its shared-memory key cache.
//
// The select entry (impls/cuda/kvcomp/snapkv_cuda.cu) is reached with dlsym, so this file builds
// whether or not the CUDA backend is compiled in (without it, require_backend skips).
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "attnbench/rng.h"
#include "reference/kvcomp/snapkv_common.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;

namespace {

// The shared cases, then the device code's own edges: head dims off the vector paths (one dim;
// not a multiple of 8 for 16-bit K rows; odd), a window of one query, wide pooling, head_dim 512, a
// prefix too long for the select kernel's key cache, and the Llama-3-8B shape of suites/ci.json.
std::vector<std::string> cases() {
  std::vector<std::string> v = test::kSnapkvCases;
  v.insert(v.end(), {
      "snapkv/batch=1,q_heads=6,kv_heads=3,head_dim=1,kv_len=333,obs_window=5,budget=40/f32/s7",
      "snapkv/batch=1,q_heads=4,kv_heads=2,head_dim=20,kv_len=450,obs_window=1,budget=30,pool_kernel=31/f16/s8",
      "snapkv/batch=1,q_heads=2,kv_heads=1,head_dim=37,kv_len=700,obs_window=64,budget=200,pool=avg,pool_kernel=9/bf16/s9",
      "snapkv/batch=1,q_heads=4,kv_heads=1,head_dim=512,kv_len=300,obs_window=16,budget=50/f32/s10",
      "snapkv/batch=1,q_heads=2,kv_heads=2,head_dim=64,kv_len=20000,obs_window=32,budget=2048/bf16/s11",
      "snapkv/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=4096,obs_window=64,budget=512/bf16/s12",
  });
  return v;
}

using SelectFn = int (*)(const float* scores, int rows, int prefix, int top_k, int window, int32_t* kept, char* err,
                         size_t err_len);

}  // namespace

TEST_CASE("snapkv cuda: passes the SET check", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(cases(), be) == std::vector<std::string>{});
}

TEST_CASE("snapkv cuda: outputs are the same run to run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  for (const std::string& id : {test::kSnapkvCases[0], test::kSnapkvCases[2]}) {
    CAPTURE(id);
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
  }
}

TEST_CASE("snapkv cuda: equal scores keep the smallest prefix indices", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  // Every key of a head equal to its first: every logit of a window query is the same, so every
  // prefix token scores the same, bit for bit, and the tie rule keeps 0 .. top_k − 1.
  const Case c = test::case_from_id("snapkv/batch=2,q_heads=6,kv_heads=2,head_dim=48,kv_len=600,obs_window=16,budget=80/f32/s3");
  const kvcomp::SnapkvShape s = kvcomp::snapkv_shape(c);
  TensorMap in = c.method->inputs(c);
  HostTensor& k = in.at("k");
  std::vector<double> first(s.head_dim);
  for (int64_t bg = 0; bg < s.batch * s.kv_heads; ++bg) {
    k.get_row(bg * s.kv_len * s.head_dim, s.head_dim, first.data());
    for (int64_t j = 1; j < s.kv_len; ++j)
      for (int64_t x = 0; x < s.head_dim; ++x) k.set((bg * s.kv_len + j) * s.head_dim + x, first[x]);
  }
  const RowResult row = test::check_with_inputs(c, std::move(in), be, "radix");
  REQUIRE(test::status_and_reason(row) == "pass ");
  const HostTensor& idx = row.outputs.at("kept_idx");
  for (int64_t bg = 0; bg < s.batch * s.kv_heads; ++bg)
    for (int64_t r = 0; r < s.budget; ++r) {
      const int64_t want = r < s.top_k() ? r : s.prefix() + (r - s.top_k());
      CHECK(idx.get(bg * s.budget + r) == static_cast<double>(want));
    }
}

TEST_CASE("snapkv cuda: the select kernel keeps exactly the spec's top-k", "[cuda]") {
  test::require_backend("cuda");
  const auto select = reinterpret_cast<SelectFn>(dlsym(RTLD_DEFAULT, "attnbench_cuda_snapkv_select"));
  REQUIRE(select != nullptr);
  const PhiloxStream rng(11, "snapkv.select.test", kDomainInputs);
  // Rows of a prefix: uniform, all equal, a few values repeated (±0, negatives, a subnormal),
  // decreasing, increasing. Prefix 5000 fits the key cache; 20000 does not.
  for (const int prefix : {5000, 20000}) {
    constexpr int kRows = 5, kWindow = 3;
    std::vector<float> scores(static_cast<size_t>(kRows) * prefix);
    const float few[] = {0.0f, -0.0f, 1e-3f, 1e-3f, -2.5f, 0x1p-140f, 7.0f, 1e-3f};
    for (int j = 0; j < prefix; ++j) {
      scores[j] = static_cast<float>(rng.uniform_f64(static_cast<uint64_t>(j)));
      scores[prefix + j] = 0.25f;
      scores[2 * prefix + j] = few[static_cast<int>(rng.uniform_f64(static_cast<uint64_t>(prefix + j)) * 8)];
      scores[3 * prefix + j] = static_cast<float>(prefix - j);
      scores[4 * prefix + j] = static_cast<float>(j);
    }
    for (const int top_k : {1, 777, prefix / 2, prefix - 1}) {
      CAPTURE(prefix, top_k);
      std::vector<int32_t> kept(static_cast<size_t>(kRows) * (top_k + kWindow));
      char err[256] = {};
      REQUIRE(select(scores.data(), kRows, prefix, top_k, kWindow, kept.data(), err, sizeof err) == 0);
      std::vector<int32_t> order(prefix), want(top_k);
      for (int r = 0; r < kRows; ++r) {
        CAPTURE(r);
        kvcomp::select_top_k(scores.data() + static_cast<size_t>(r) * prefix, prefix, top_k, order.data(), want.data());
        const int32_t* got = kept.data() + static_cast<size_t>(r) * (top_k + kWindow);
        int mismatches = 0;
        for (int i = 0; i < top_k; ++i) mismatches += got[i] != want[i];
        CHECK(mismatches == 0);
        for (int i = 0; i < kWindow; ++i) CHECK(got[top_k + i] == prefix + i);
      }
    }
  }
}
