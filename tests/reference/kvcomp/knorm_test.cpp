// knorm's spec: scores by hand, exact ties to the smaller index, the keep-everything edge, the SET
// check's negative test (a kept index swapped for the lowest-scored token), and kvpress's
// KnormPress stated in attnbench's budget.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/error.h"
#include "attnbench/method.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("knorm: score = -|k|, the smallest norms kept, ties to the smaller index", "[unit]") {
  // One KV head of 6 keys of dim 2 with norms 5, 1, 2, 1, 3, 0: budget 3 keeps 5 (norm 0), then
  // 1 and 3 (norm 1, a tie) — in index order 1, 3, 5.
  const Case c = test::method_case("knorm", "batch=1,q_heads=1,kv_heads=1,head_dim=2,kv_len=6,budget=3,n_future=0");
  TensorMap in = c.method->inputs(c);
  const double keys[6][2] = {{3, 4}, {1, 0}, {0, 2}, {0, -1}, {3, 0}, {0, 0}};
  for (int j = 0; j < 6; ++j)
    for (int x = 0; x < 2; ++x) in.at("k").set(j * 2 + x, keys[j][x]);
  const Reference ref = c.method->reference(c, in);
  CHECK(ref.tensors.at("scores").get(0) == -5.0);
  CHECK(ref.tensors.at("scores").get(5) == 0.0);
  CHECK(test::kept_tokens(ref.tensors, 0) == std::vector<int64_t>{1, 3, 5});
  CHECK(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
}

TEST_CASE("knorm: budget >= kv_len keeps everything; G-KV's sinks are what it evicts", "[unit]") {
  const Case all = test::method_case("knorm", "batch=2,q_heads=4,kv_heads=2,head_dim=16,kv_len=20,budget=30,n_future=2", "bf16");
  const TensorMap in = all.method->inputs(all);
  const Reference ref = all.method->reference(all, in);
  for (int64_t r = 0; r < 4; ++r) {
    std::vector<int64_t> want(20);
    for (int64_t j = 0; j < 20; ++j) want[j] = j;
    CHECK(test::kept_tokens(ref.tensors, r) == want);
  }
  CHECK(all.method->quality(all, in, test::reference_as_outputs(all, ref))["compression_ratio"] == 1.0);
  // G-KV's sinks have large keys: the lowest scores, never kept at 8x.
  const Case c = test::method_case("knorm", "batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=1024,budget=128,n_future=4");
  const Reference r8 = c.method->reference(c, c.method->inputs(c));
  for (int64_t row = 0; row < 2; ++row)
    for (int64_t j : test::kept_tokens(r8.tensors, row)) CHECK(j >= 4);
}

TEST_CASE("knorm: the SET check fails a kept index swapped for the lowest-scored token", "[unit]") {
  const Case c = test::method_case("knorm", "batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=400,budget=64,n_future=2", "f16", 5);
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  TensorMap got = test::reference_as_outputs(c, ref);
  REQUIRE(c.method->check(c, in, ref, got).pass());
  const int64_t row = 3, budget = 64, T = 400, d = 64;
  const HostTensor& scores = ref.tensors.at("scores");
  int64_t lowest = 0;
  for (int64_t j = 1; j < T; ++j)
    if (scores.get(row * T + j) < scores.get(row * T + lowest)) lowest = j;
  std::vector<int64_t> kept = test::kept_tokens(ref.tensors, row);
  kept.back() = lowest;
  std::sort(kept.begin(), kept.end());
  for (int64_t i = 0; i < budget; ++i) {
    got.at("kept_idx").set(row * budget + i, static_cast<double>(kept[i]));
    for (int64_t x = 0; x < d; ++x) {
      got.at("k_kept").set((row * budget + i) * d + x, in.at("k").get((row * T + kept[i]) * d + x));
      got.at("v_kept").set((row * budget + i) * d + x, in.at("v").get((row * T + kept[i]) * d + x));
    }
  }
  const CheckReport report = c.method->check(c, in, ref, got);
  CHECK_FALSE(report.pass());
  CHECK_THAT(report.first_failure(), Catch::StartsWith("kept_idx:") && Catch::Contains(std::to_string(lowest)));
}

TEST_CASE("knorm keeps what kvpress's KnormPress keeps at its compression ratio", "[unit]") {
  // KnormPress scores −‖k‖ and keeps int(T·(1 − ratio)) tokens per head by topk: attnbench's
  // budget is that count (ties, which torch.topk leaves unspecified, go to the smaller index).
  for (const auto& [T, ratio] : std::vector<std::pair<int64_t, double>>{{777, 0.875}, {1000, 0.5}, {64, 0.25}}) {
    const auto budget = static_cast<int64_t>(static_cast<double>(T) * (1 - ratio));
    INFO("T=" << T << " ratio=" << ratio);
    const Case c = test::method_case("knorm", cat("q_heads=2,kv_heads=1,head_dim=32,kv_len=", T, ",budget=", budget, ",n_future=0"));
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    std::vector<std::pair<double, int64_t>> by_norm;
    std::vector<double> k(32);
    for (int64_t j = 0; j < T; ++j) {
      in.at("k").get_row(j * 32, 32, k.data());
      double n2 = 0;
      for (double v : k) n2 += v * v;
      by_norm.emplace_back(std::sqrt(n2), j);
    }
    std::sort(by_norm.begin(), by_norm.end());
    std::vector<int64_t> want;
    for (int64_t i = 0; i < budget; ++i) want.push_back(by_norm[i].second);
    std::sort(want.begin(), want.end());
    CHECK(test::kept_tokens(ref.tensors, 0) == want);
  }
}
