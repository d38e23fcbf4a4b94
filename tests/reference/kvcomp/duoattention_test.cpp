// duoattention's spec: the streaming heads by hand (the lowest gate scores over the model, drawn
// here from the same stream), Python's rounding of their count, the kept sets by hand, kvpress's
// compression over the model's layers, the edges and the rules, the EXACT check's negative test (a
// streaming head's kept index swapped for a masked token), and its work (a copy, no scoring). The
// family's checks and companions are tested for every KV method in scored_selection_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/rng.h"
#include "reference/kvcomp/scored_selection_common.h"
#include "support.h"

using namespace attnbench;

namespace {

// The flat indices l·H + h of the n lowest of the model's L·H gate scores (ties: smaller index),
// by a full sort of the case seed's stream.
std::vector<int64_t> lowest_gates(uint64_t seed, int64_t heads, int64_t n) {
  const PhiloxStream u(seed, "duoattention.gate_scores", kDomainInputs);
  std::vector<std::pair<double, int64_t>> gates;
  for (int64_t i = 0; i < heads; ++i) gates.emplace_back(u.uniform_f64(static_cast<uint64_t>(i)), i);
  std::sort(gates.begin(), gates.end());
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(gates[i].second);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> range(int64_t lo, int64_t hi) {
  std::vector<int64_t> r(hi - lo);
  std::iota(r.begin(), r.end(), lo);
  return r;
}

// Every row's kept tokens of one layer's case.
std::vector<std::vector<int64_t>> kept_rows(const Case& c) {
  const Reference ref = c.method->reference(c, c.method->inputs(c));
  std::vector<std::vector<int64_t>> rows;
  for (int64_t r = 0; r < c.i64("batch") * c.i64("kv_heads"); ++r) rows.push_back(test::kept_tokens(ref.tensors, r));
  return rows;
}

}  // namespace

TEST_CASE("duoattention: the lowest gate scores over the model stream, sinks and recent window; the rest keep all", "[unit]") {
  // 3 layers × 2 KV heads, T = 20, S = 2, R = 3, budget 10: ρ = (20 − 10)/(20 − 5) = 2/3, so
  // round(6·2/3) = 4 of the 6 heads stream, the 4 lowest gates wherever their layers are.
  const std::vector<int64_t> streaming = lowest_gates(5, 6, 4);
  std::vector<int64_t> seen;
  for (int64_t layer = 0; layer < 3; ++layer) {
    const Case c = test::method_case("duoattention", cat("batch=2,q_heads=4,kv_heads=2,head_dim=8,kv_len=20,sink=2,recent=3,budget=10,",
                                                         "n_layers=3,n_future=2,layer=", layer), "f32", 5);
    const auto rows = kept_rows(c);
    for (int64_t h = 0; h < 2; ++h) {
      INFO("layer " << layer << " head " << h);
      const bool streams = std::count(streaming.begin(), streaming.end(), layer * 2 + h) > 0;
      const std::vector<int64_t> want = streams ? std::vector<int64_t>{0, 1, 17, 18, 19} : range(0, 20);
      CHECK(rows[h] == want);
      CHECK(rows[2 + h] == want);  // every sequence alike
      if (streams) seen.push_back(layer * 2 + h);
    }
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    CHECK(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
    CHECK_FALSE(ref.tensors.count("scores"));  // positional: no scores, checked EXACT
    CHECK(c.method->outputs(c)[0].cls == CheckClass::EXACT);
  }
  CHECK(seen == streaming);
}

TEST_CASE("duoattention rounds the streaming heads' count half to even, as Python's round", "[unit]") {
  // 2 layers × 2 heads, T = 13, S + R = 5: L·H·ρ = 4·(13 − budget)/8. 2.5 → 2, 1.5 → 2, 0.5 → 0,
  // 3.5 → 4.
  for (const auto& [budget, n] : std::vector<std::pair<int64_t, int64_t>>{{8, 2}, {10, 2}, {12, 0}, {6, 4}}) {
    INFO("budget=" << budget);
    int64_t streaming = 0;
    for (int64_t layer = 0; layer < 2; ++layer) {
      const Case c = test::method_case("duoattention", cat("q_heads=2,kv_heads=2,head_dim=4,kv_len=13,sink=2,recent=3,n_future=0,",
                                                           "n_layers=2,budget=", budget, ",layer=", layer));
      for (const auto& row : kept_rows(c)) streaming += row.size() == 5;
    }
    CHECK(streaming == n);
  }
}

TEST_CASE("duoattention achieves kvpress's compression over the model's layers", "[unit]") {
  // kvpress: compression_ratio_ = mean(streaming_mask)·(1 − (sink + recent)/k_len) over the model.
  const int64_t L = 4, H = 4, T = 1000, S = 16, R = 64;
  for (const int64_t budget : {80, 250, 400, 777, 1000}) {
    INFO("budget=" << budget);
    const auto n = static_cast<int64_t>(std::nearbyint(static_cast<double>(L * H * (T - budget)) / static_cast<double>(T - S - R)));
    double kept = 0;
    int64_t streaming = 0;
    for (int64_t layer = 0; layer < L; ++layer) {
      const Case c = test::method_case("duoattention", cat("q_heads=8,kv_heads=4,head_dim=4,kv_len=1000,sink=16,recent=64,n_future=0,",
                                                           "n_layers=4,budget=", budget, ",layer=", layer), "f32", 9);
      for (const auto& row : kept_rows(c)) {
        kept += static_cast<double>(row.size());
        streaming += row.size() == static_cast<size_t>(S + R);
      }
    }
    CHECK(streaming == n);
    const double kvpress = static_cast<double>(n) / (L * H) * (1.0 - static_cast<double>(S + R) / T);
    CHECK(1.0 - kept / static_cast<double>(L * H * T) == Approx(kvpress).margin(1e-12));
    // The budget is the mean over the model's heads, up to rounding the count of streaming heads.
    CHECK(std::abs(kept / (L * H) - static_cast<double>(budget)) <= 0.5 * (T - S - R) / (L * H) + 1e-9);
  }
}

TEST_CASE("duoattention: the edges and the rules", "[unit]") {
  struct Edge {
    const char* params;
    std::vector<int64_t> kept;  // every row's
  };
  const std::vector<Edge> edges = {
      {"kv_len=9,sink=2,recent=3,budget=5", {0, 1, 6, 7, 8}},  // budget = sink + recent: every head streams
      {"kv_len=9,sink=2,recent=3,budget=9", range(0, 9)},      // budget = kv_len: none
      {"kv_len=9,sink=2,recent=3,budget=50", range(0, 9)},     // budget over the prompt: none, padded
      {"kv_len=4,sink=2,recent=3,budget=5", range(0, 4)},      // kv_len ≤ sink + recent: nothing masked
      {"kv_len=9,sink=0,recent=1,budget=1", {8}},              // the last token alone
  };
  for (const auto& e : edges) {
    INFO(e.params);
    const Case c = test::method_case("duoattention", std::string("q_heads=4,kv_heads=2,head_dim=16,n_future=2,n_layers=3,") + e.params, "bf16");
    CHECK_FALSE(kvcomp::scores_needed(c));
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    for (int64_t r = 0; r < 2; ++r) CHECK(test::kept_tokens(ref.tensors, r) == e.kept);
    const TensorMap got = test::reference_as_outputs(c, ref);
    CHECK(c.method->check(c, in, ref, got).pass());
    const Json q = c.method->quality(c, in, got);
    if (e.kept.size() == static_cast<size_t>(c.i64("kv_len"))) CHECK(q["out_rel_l2"] == 0.0);
  }
  CHECK_THROWS_WITH(test::method_case("duoattention", "kv_len=1000,sink=128,recent=256,budget=300"),
                    Catch::Contains("budget=300 is smaller than sink + recent = 384"));
  CHECK_THROWS_WITH(test::method_case("duoattention", "layer=4,n_layers=4"), Catch::Contains("not a layer"));
  CHECK_THROWS(test::method_case("duoattention", "sink=4,recent=0,budget=64"));  // kvpress's slice S:−0 masks nothing
}

TEST_CASE("duoattention: the EXACT check fails a streaming head's kept index swapped for a masked token", "[unit]") {
  // Every head streams (budget = sink + recent): row 1's first recent token (340) becomes the
  // masked token 200, K and V regathered there, so only the selection is wrong (still ascending).
  const Case c = test::method_case("duoattention", "batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=400,sink=4,recent=60,budget=64,n_future=2", "f16");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  TensorMap got = test::reference_as_outputs(c, ref);
  REQUIRE(c.method->check(c, in, ref, got).pass());
  const int64_t row = 1, cap = 64, d = 64, slot = 4;
  REQUIRE(got.at("kept_idx").get(row * cap + slot) == 340);
  got.at("kept_idx").set(row * cap + slot, 200);
  for (int64_t x = 0; x < d; ++x) {
    got.at("k_kept").set((row * cap + slot) * d + x, in.at("k").get((row * 400 + 200) * d + x));
    got.at("v_kept").set((row * cap + slot) * d + x, in.at("v").get((row * 400 + 200) * d + x));
  }
  const CheckReport report = c.method->check(c, in, ref, got);
  CHECK_FALSE(report.pass());
  CHECK_THAT(report.first_failure(), Catch::StartsWith("kept_idx:"));
  for (const auto& o : report.outputs)
    if (o.output != "kept_idx") CHECK(o.pass);
}

TEST_CASE("duoattention compresses streaming_llm's cache with no scoring: its work is a copy", "[unit]") {
  const Case c = test::method_case("duoattention", "batch=2,q_heads=32,kv_heads=8,head_dim=128,kv_len=4096,budget=512,layer=16", "bf16");
  CHECK_FALSE(kvcomp::scores_needed(c));
  const Work w = c.method->work(c);
  CHECK(w.flops == 0);
  CHECK(w.bound == Bound::copy);
  const std::string shape = "batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=1024,budget=512,n_future=4";
  const Case d = test::method_case("duoattention", shape), s = test::method_case("streaming_llm", shape);
  const TensorMap a = d.method->inputs(d), b = s.method->inputs(s);
  CHECK_FALSE(a.count("q_obs"));
  for (const char* name : {"k", "v", "q_future"}) CHECK(a.at(name).hash() == b.at(name).hash());
  const Json q = d.method->quality(d, a, test::reference_as_outputs(d, d.method->reference(d, a)));
  CHECK(q["compression_point"] == 2.0);
}
