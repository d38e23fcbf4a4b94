// streaming_llm's spec: the kept set by hand and against kvpress's rule, the edge cases, the EXACT
// check's negative test (a kept index swapped for an evicted token), the G-KV cache it shares with
// snapkv, and its work. The family's checks and companions are tested for every KV method in
// scored_selection_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("streaming_llm: the sinks then the recent window, every head alike", "[unit]") {
  const Case c = test::method_case("streaming_llm", "batch=2,q_heads=4,kv_heads=2,head_dim=8,kv_len=10,budget=5,n_sink=2,n_future=2");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  for (int64_t row = 0; row < 4; ++row) CHECK(test::kept_tokens(ref.tensors, row) == std::vector<int64_t>{0, 1, 7, 8, 9});
  // k_kept row 2 of (b=1, g=0) is token 7 of that row, bit for bit.
  for (int64_t x = 0; x < 8; ++x)
    CHECK(ref.tensors.at("k_kept").get(((2 * 5) + 2) * 8 + x) == in.at("k").get(((2 * 10) + 7) * 8 + x));
  CHECK(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
}

TEST_CASE("streaming_llm keeps what kvpress's StreamingLLMPress keeps", "[unit]") {
  // kvpress: n_kept = int(T·(1 − ratio)) in double precision, truncated; the n_pruned = T − n_kept
  // tokens right after the n_sink sinks get score 0 and are evicted; every other token is kept.
  // Here budget = n_kept. (Not ⌊T·ratio⌋ pruned: at T = 777, ratio 0.875 that is 679, kvpress 680;
  // at T = 300, ratio 0.9, 270 against 271.)
  for (const auto& [T, ratio, sinks] : std::vector<std::tuple<int64_t, double, int64_t>>{
           {1000, 0.5, 4}, {777, 0.875, 4}, {64, 0.25, 0}, {300, 0.9, 16}}) {
    const auto budget = static_cast<int64_t>(static_cast<double>(T) * (1.0 - ratio));
    const int64_t pruned = T - budget;
    INFO("T=" << T << " ratio=" << ratio << " n_sink=" << sinks);
    const Case c = test::method_case("streaming_llm", cat("q_heads=2,kv_heads=1,head_dim=4,kv_len=", T, ",budget=", budget, ",n_sink=", sinks,
                                      ",n_future=0"));
    std::vector<int64_t> want;
    for (int64_t j = 0; j < T; ++j)
      if (j < sinks || j >= sinks + pruned) want.push_back(j);
    CHECK(test::kept_tokens(c.method->reference(c, c.method->inputs(c)).tensors, 0) == want);
  }
}

TEST_CASE("streaming_llm: budget rules and the edge cases", "[unit]") {
  CHECK_THROWS_WITH(test::method_case("streaming_llm", "kv_len=100,budget=3,n_sink=4"), Catch::Contains("n_sink"));
  CHECK_THROWS_WITH(test::method_case("streaming_llm", "q_heads=6,kv_heads=4"), Catch::Contains("does not divide"));
  struct Edge {
    const char* params;
    std::vector<int64_t> kept;
  };
  const std::vector<Edge> edges = {
      {"kv_len=9,budget=3,n_sink=3", {0, 1, 2}},                 // sinks only
      {"kv_len=9,budget=3,n_sink=0", {6, 7, 8}},                 // a pure recent window
      {"kv_len=5,budget=8,n_sink=2", {0, 1, 2, 3, 4}},           // budget ≥ kv_len: everything, padded
      {"kv_len=3,budget=8,n_sink=6", {0, 1, 2}},                 // more sinks than tokens
      {"kv_len=1,budget=1,n_sink=1", {0}},
  };
  for (const auto& e : edges) {
    INFO(e.params);
    const Case c = test::method_case("streaming_llm", std::string("q_heads=2,kv_heads=1,head_dim=16,n_future=2,") + e.params, "bf16");
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    CHECK(test::kept_tokens(ref.tensors, 0) == e.kept);
    const TensorMap got = test::reference_as_outputs(c, ref);
    CHECK(c.method->check(c, in, ref, got).pass());
    const Json q = c.method->quality(c, in, got);
    if (e.kept.size() == static_cast<size_t>(c.i64("kv_len"))) {
      CHECK(q["compression_ratio"] == 1.0);
      CHECK(q["out_rel_l2"] == 0.0);
    }
  }
}

TEST_CASE("streaming_llm: the EXACT check fails a kept index swapped for an evicted token", "[unit]") {
  const Case c = test::method_case("streaming_llm", "batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=400,budget=64,n_sink=4,n_future=2", "f16");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  TensorMap got = test::reference_as_outputs(c, ref);
  REQUIRE(c.method->check(c, in, ref, got).pass());
  // Row 3: the first window token (336) becomes the evicted token 200, K and V regathered there,
  // so only the selection is wrong (the indices stay ascending).
  const int64_t row = 3, budget = 64, d = 64, slot = 4;
  got.at("kept_idx").set(row * budget + slot, 200);
  for (int64_t x = 0; x < d; ++x) {
    got.at("k_kept").set((row * budget + slot) * d + x, in.at("k").get((row * 400 + 200) * d + x));
    got.at("v_kept").set((row * budget + slot) * d + x, in.at("v").get((row * 400 + 200) * d + x));
  }
  const CheckReport report = c.method->check(c, in, ref, got);
  CHECK_FALSE(report.pass());
  CHECK_THAT(report.first_failure(), Catch::StartsWith("kept_idx:"));
  for (const auto& o : report.outputs)
    if (o.output != "kept_idx") CHECK(o.pass);
}

TEST_CASE("streaming_llm compresses snapkv's cache and is judged on the same future queries", "[unit]") {
  const std::string shape = "batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=1024,budget=128,n_future=16";
  const Case s = test::method_case("streaming_llm", shape);
  const Case k = test::case_from_id("snapkv/" + shape + ",obs_window=32/f32/s1");
  const TensorMap a = s.method->inputs(s), b = k.method->inputs(k);
  CHECK_FALSE(a.count("q_obs"));
  for (const char* name : {"k", "v", "q_future"}) CHECK(a.at(name).hash() == b.at(name).hash());
  // G-KV plants sinks (kept here) and needles in the middle (evicted here): the sinks carry much of
  // the future queries' attention, and snapkv, which looks at the queries, keeps more of it.
  const Json qs = s.method->quality(s, a, test::reference_as_outputs(s, s.method->reference(s, a)));
  const Json qk = k.method->quality(k, b, test::reference_as_outputs(k, k.method->reference(k, b)));
  CHECK(qs["compression_ratio"] == 8.0);
  CHECK(qs["kv_bytes_kept"] == qk["kv_bytes_kept"]);
  CHECK(qs["attn_recall"].get<double>() > 0.3);
  CHECK(qs["attn_recall"].get<double>() < qk["attn_recall"].get<double>());
}

TEST_CASE("streaming_llm does no arithmetic: its work is a copy, judged against the copy bandwidth", "[unit]") {
  const Case c = test::method_case("streaming_llm", "batch=2,q_heads=32,kv_heads=8,head_dim=128,kv_len=4096,budget=512", "bf16");
  const Work w = c.method->work(c);
  CHECK(w.flops == 0);
  CHECK(w.bound == Bound::copy);
}
