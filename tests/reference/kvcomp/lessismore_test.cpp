// lessismore's spec: the rank-major union of per-head top-k by hand (as the paper's Algorithm 1
// states it: rank 0 of every head in head order, then rank 1, …, duplicates dropped, truncated),
// the recency window, the set shared by every KV head, the edge cases, and its own check of
// kept_idx: a near tie either way passes, a clear swap fails (and O, still the reference set's,
// fails over the impl's).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "support.h"

using namespace attnbench;

namespace {

// The set by the paper's procedure, from fp64 logits of the inputs.
std::vector<int64_t> paper_set(const Case& c, const TensorMap& in, int64_t b) {
  const int64_t Hq = c.i64("q_heads"), Hkv = c.i64("kv_heads"), G = Hq / Hkv, d = c.i64("head_dim"), T = c.i64("kv_len");
  const int64_t Kb = c.i64("budget"), R = static_cast<int64_t>(std::floor(static_cast<double>(Kb) * c.f64("recent_ratio")));
  const int64_t k = Kb - R, C = T - R;
  std::vector<std::vector<int64_t>> ranked(Hq);
  for (int64_t h = 0; h < Hq; ++h) {
    std::vector<double> p(C);
    for (int64_t j = 0; j < C; ++j)
      for (int64_t x = 0; x < d; ++x)
        p[j] += in.at("q").get((b * Hq + h) * d + x) * in.at("k").get(((b * Hkv + h / G) * T + j) * d + x);
    std::vector<int64_t> o(C);
    std::iota(o.begin(), o.end(), 0);
    std::sort(o.begin(), o.end(), [&](int64_t a, int64_t z) { return p[a] != p[z] ? p[a] > p[z] : a < z; });
    ranked[h].assign(o.begin(), o.begin() + k);
  }
  std::vector<int64_t> unified;
  std::set<int64_t> seen;
  for (int64_t rank = 0; rank < k && static_cast<int64_t>(unified.size()) < k; ++rank)
    for (int64_t h = 0; h < Hq && static_cast<int64_t>(unified.size()) < k; ++h)
      if (seen.insert(ranked[h][rank]).second) unified.push_back(ranked[h][rank]);
  for (int64_t j = T - R; j < T; ++j) unified.push_back(j);
  std::sort(unified.begin(), unified.end());
  return unified;
}

const char* kLessismoreShape = "batch=2,q_heads=8,kv_heads=2,head_dim=32,kv_len=300,budget=40,n_future=4";

}  // namespace

TEST_CASE("lessismore: the rank-major union of every head's top k, then the recency window", "[unit]") {
  for (const char* extra : {"", ",recent_ratio=0.5", ",recent_ratio=0", ",ties=true"}) {
    INFO(extra);
    const Case c = test::method_case("lessismore", cat(kLessismoreShape, extra));
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    for (int64_t b = 0; b < 2; ++b) {
      const std::vector<int64_t> want = paper_set(c, in, b);
      CHECK(test::kept_tokens(ref.tensors, b * 2) == want);
      CHECK(test::kept_tokens(ref.tensors, b * 2 + 1) == want);  // one set for every KV head
    }
    CHECK(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
  }
}

TEST_CASE("lessismore: rules and edge cases", "[unit]") {
  struct Edge {
    const char* params;
    size_t kept;
  };
  const std::vector<Edge> edges = {
      {"kv_len=9,budget=12", 9},                     // budget ≥ kv_len: everything
      {"kv_len=30,budget=1,recent_ratio=0", 1},      // one key, chosen by head 0's best
      {"kv_len=30,budget=8,recent_ratio=1", 8},      // the window alone
      {"kv_len=300,budget=256", 256},                // k close to the candidates
  };
  for (const auto& e : edges) {
    INFO(e.params);
    const Case c = test::method_case("lessismore", std::string("q_heads=4,kv_heads=2,head_dim=16,n_future=2,") + e.params, "bf16");
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    const std::vector<int64_t> kept = test::kept_tokens(ref.tensors, 0);
    CHECK(kept.size() == e.kept);
    if (e.kept < static_cast<size_t>(c.i64("kv_len"))) CHECK(kept == paper_set(c, in, 0));
    CHECK(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
  }
}

TEST_CASE("lessismore: its check fails a clear swap and takes exact ties either way", "[unit]") {
  {  // a kept token exchanged for one no head ranks near the top
    const Case c = test::method_case("lessismore", kLessismoreShape, "f16");
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    TensorMap got = test::reference_as_outputs(c, ref);
    REQUIRE(c.method->check(c, in, ref, got).pass());
    const HostTensor& scores = ref.tensors.at("scores");  // −key; the lowest: ranked by no head
    std::vector<int64_t> set = test::kept_tokens(ref.tensors, 0);
    int64_t worst = 0;
    for (int64_t j = 0; j < 290; ++j)
      if (scores.get(j) < scores.get(worst)) worst = j;
    REQUIRE(std::find(set.begin(), set.end(), worst) == set.end());
    int64_t best = 0;
    for (size_t i = 0; i < set.size(); ++i)
      if (set[i] < 290 && scores.get(set[i]) > scores.get(set[best])) best = static_cast<int64_t>(i);
    set[best] = worst;  // the best-merged token out, a token no head ranks in
    std::sort(set.begin(), set.end());
    test::check_replaced_set_fails(c, in, ref, got, 0, set);
  }
  {  // exact ties (G-KV's duplicated keys): a duplicate of a kept token may stand in for it
    const Case c = test::method_case("lessismore", cat(kLessismoreShape, ",ties=true"), "f32");
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    TensorMap got = test::reference_as_outputs(c, ref);
    std::vector<int64_t> set = test::kept_tokens(ref.tensors, 0);
    // With ties, odd prefix positions j ≥ n_sink + 1 copy key j − 1: find a kept one whose twin is not kept.
    int64_t slot = -1, twin = -1;
    for (size_t i = 0; i < set.size() && slot < 0; ++i) {
      const int64_t j = set[i];
      if (j >= 268) continue;  // the planted twins are prefix positions, before G-KV's 32-query window
      for (const int64_t t : {j - 1, j + 1})
        if (std::min(t, j) >= 4 && t < 268 && std::max(t, j) % 2 == 1 && std::find(set.begin(), set.end(), t) == set.end()) {
          slot = static_cast<int64_t>(i);
          twin = t;
          break;
        }
    }
    REQUIRE(slot >= 0);
    set[slot] = twin;
    std::sort(set.begin(), set.end());
    for (size_t i = 0; i < set.size(); ++i) got.at("kept_idx").set(static_cast<int64_t>(i), static_cast<double>(set[i]));
    const CheckReport report = c.method->check(c, in, ref, got);
    for (const auto& o : report.outputs)
      if (o.output == "kept_idx") CHECK(o.pass);
  }
}

TEST_CASE("lessismore: quality reports the step's bytes and the logits' reads", "[unit]") {
  const Case c = test::method_case("lessismore", kLessismoreShape, "bf16");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const Json q = c.method->quality(c, in, test::reference_as_outputs(c, ref));
  CHECK(q["selection_only"] == true);
  CHECK(q["kv_bytes_read_per_step"].get<double>() == 4 * 40 * (2.0 * 32 * 2 + 4));
  CHECK(q["compression_point"].get<double>() == Approx(300.0 / 40));
  CHECK(q["attn_recall"].get<double>() > 0.5);
}
