// tokenselect's spec: the vote by hand (each head's softmax over the candidates alone, summed over
// the sequence's heads), the set it reads, the step's O over that set, the edge cases, the checks'
// negative test (a kept candidate swapped for the worst one: the set fails, and O, still the
// reference set's, fails over the impl's), what its quality reports, and the selection cache (the
// planted cosine, the cached set on a hit, the fresh one on a miss, a wrong decision failing and
// either decision passing at the threshold). The family's selection is tested for every KV method
// in scored_selection_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "reference/kvcomp/scored_selection.h"
#include "reference/kvcomp/sparse_step.h"
#include "support.h"

using namespace attnbench;

namespace {

// v_j = Σ_h softmax over the candidates [n_init, T − n_local) of s·q_h·k_{g(h),j}, by hand.
std::vector<double> votes(const Case& c, const TensorMap& in, int64_t b, double scale) {
  const int64_t Hq = c.i64("q_heads"), G = Hq / c.i64("kv_heads"), d = c.i64("head_dim"), T = c.i64("kv_len");
  const int64_t lo = c.i64("n_init"), hi = T - c.i64("n_local");
  std::vector<double> v(T, 0.0), logit(T);
  for (int64_t h = 0; h < Hq; ++h) {
    const int64_t g = h / G;
    double m = -INFINITY, l = 0;
    for (int64_t j = lo; j < hi; ++j) {
      double dot = 0;
      for (int64_t x = 0; x < d; ++x)
        dot += in.at("q").get((b * Hq + h) * d + x) * in.at("k").get(((b * c.i64("kv_heads") + g) * T + j) * d + x);
      m = std::max(m, logit[j] = scale * dot);
    }
    for (int64_t j = lo; j < hi; ++j) l += std::exp(logit[j] - m);
    for (int64_t j = lo; j < hi; ++j) v[j] += std::exp(logit[j] - m) / l;
  }
  return v;
}

// The set the header specifies from the votes: sinks, the top-k candidates (larger vote, then
// smaller index), the local window; ascending.
std::vector<int64_t> vote_set(const Case& c, const std::vector<double>& v) {
  const int64_t T = c.i64("kv_len"), n_init = c.i64("n_init"), n_local = c.i64("n_local");
  const int64_t k = c.i64("budget") - n_init - n_local;
  std::vector<int64_t> cand(T - n_init - n_local);
  std::iota(cand.begin(), cand.end(), n_init);
  std::sort(cand.begin(), cand.end(), [&](int64_t a, int64_t b) { return v[a] != v[b] ? v[a] > v[b] : a < b; });
  std::vector<int64_t> set;
  for (int64_t j = 0; j < n_init; ++j) set.push_back(j);
  set.insert(set.end(), cand.begin(), cand.begin() + k);
  for (int64_t j = T - n_local; j < T; ++j) set.push_back(j);
  std::sort(set.begin(), set.end());
  return set;
}

const char* kTokenselectShape = "batch=2,q_heads=8,kv_heads=2,head_dim=32,kv_len=300,budget=40,n_init=2,n_local=8,n_future=4";

}  // namespace

TEST_CASE("tokenselect: the soft vote over the candidates by hand, one set for every KV head", "[unit]") {
  for (const char* scale : {"", ",score_scale=1"}) {
    INFO(scale);
    const Case c = test::method_case("tokenselect", cat(kTokenselectShape, scale));
    const TensorMap in = c.method->inputs(c);
    CHECK_FALSE(in.count("q_obs"));  // the step's query replaces the window
    REQUIRE(in.at("q").shape() == Shape{2, 8, 1, 32});
    const Reference ref = c.method->reference(c, in);
    const double s = *scale ? 1.0 : 1.0 / std::sqrt(32.0);
    for (int64_t b = 0; b < 2; ++b) {
      const std::vector<int64_t> want = vote_set(c, votes(c, in, b, s));
      CHECK(test::kept_tokens(ref.tensors, b * 2) == want);
      CHECK(test::kept_tokens(ref.tensors, b * 2 + 1) == want);
    }
    CHECK(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
  }
}

TEST_CASE("tokenselect: the softmax runs over the candidates, not every key", "[unit]") {
  // G-KV's sinks and recency ramp draw most of each head's attention; normalised over every key,
  // the heads whose sinks dominate would vote less. Over the candidates alone every head's vote
  // sums to 1, so the scores of one sequence sum to q_heads / q_heads = 1 under the family's mean.
  const Case c = test::method_case("tokenselect", kTokenselectShape);
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const HostTensor& scores = ref.tensors.at("scores");
  for (int64_t row = 0; row < 4; ++row) {
    double sum = 0;
    for (int64_t j = 2; j < 300 - 8; ++j) sum += scores.get(row * 300 + j);
    CHECK(sum == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("tokenselect: O is the decode query's attention over the kept set", "[unit]") {
  const Case c = test::method_case("tokenselect", kTokenselectShape, "bf16");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const int64_t d = 32, T = 300;
  // Row (b = 1, h = 5): KV head 1.
  const int64_t b = 1, h = 5, g = 1;
  const std::vector<int64_t> set = test::kept_tokens(ref.tensors, b * 2 + g);
  std::vector<double> logit, o(d, 0.0);
  double m = -INFINITY, l = 0;
  for (int64_t j : set) {
    double dot = 0;
    for (int64_t x = 0; x < d; ++x) dot += in.at("q").get((b * 8 + h) * d + x) * in.at("k").get(((b * 2 + g) * T + j) * d + x);
    logit.push_back(dot / std::sqrt(32.0));
    m = std::max(m, logit.back());
  }
  for (size_t i = 0; i < set.size(); ++i) {
    const double p = std::exp(logit[i] - m);
    l += p;
    for (int64_t x = 0; x < d; ++x) o[x] += p * in.at("v").get(((b * 2 + g) * T + set[i]) * d + x);
  }
  for (int64_t x = 0; x < d; ++x) CHECK(ref.tensors.at("O").get((b * 8 + h) * d + x) == Approx(o[x] / l).epsilon(1e-12));
}

TEST_CASE("tokenselect: rules and edge cases", "[unit]") {
  CHECK_THROWS_WITH(test::method_case("tokenselect", "kv_len=100,budget=10,n_init=4,n_local=8"), Catch::Contains("n_init + n_local"));
  CHECK_THROWS_WITH(test::method_case("tokenselect", "kv_len=100,budget=20,pool_kernel=4"), Catch::Contains("odd"));
  struct Edge {
    const char* params;
    std::vector<int64_t> kept;  // empty: not spelled out
  };
  const std::vector<Edge> edges = {
      {"kv_len=9,budget=12,n_init=1,n_local=2", {0, 1, 2, 3, 4, 5, 6, 7, 8}},  // budget ≥ kv_len: full attention
      {"kv_len=30,budget=5,n_init=2,n_local=3", {0, 1, 27, 28, 29}},           // the forced tokens alone
      {"kv_len=30,budget=1,n_init=0,n_local=0", {}},                           // a single key by vote
      {"kv_len=30,budget=8,n_init=0,n_local=0,pool_kernel=5", {}},             // pooled votes, nothing forced
  };
  for (const auto& e : edges) {
    INFO(e.params);
    const Case c = test::method_case("tokenselect", std::string("q_heads=4,kv_heads=2,head_dim=16,n_future=2,") + e.params, "bf16");
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    const std::vector<int64_t> kept = test::kept_tokens(ref.tensors, 0);
    if (!e.kept.empty()) CHECK(kept == e.kept);
    CHECK(kept.size() == static_cast<size_t>(std::min<int64_t>(c.i64("budget"), c.i64("kv_len"))));
    const TensorMap got = test::reference_as_outputs(c, ref);
    CHECK(c.method->check(c, in, ref, got).pass());
    const Json q = c.method->quality(c, in, got);
    CHECK(q["selection_only"] == true);
    CHECK(q["kv_bytes_kept"] == q["kv_bytes_full"]);  // the cache stays whole
    if (kept.size() == static_cast<size_t>(c.i64("kv_len"))) CHECK(q["attn_recall"].get<double>() == Approx(1.0));
  }
}

TEST_CASE("tokenselect: the checks fail a kept candidate swapped for the worst one", "[unit]") {
  const Case c = test::method_case("tokenselect", kTokenselectShape, "f16");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  TensorMap got = test::reference_as_outputs(c, ref);
  REQUIRE(c.method->check(c, in, ref, got).pass());
  // Row 0: the worst candidate by vote replaces the best kept one (the set stays ascending).
  const HostTensor& scores = ref.tensors.at("scores");
  std::vector<int64_t> set = test::kept_tokens(ref.tensors, 0);
  int64_t worst = 2, best_slot = -1;
  for (int64_t j = 2; j < 292; ++j)
    if (scores.get(j) < scores.get(worst)) worst = j;
  for (int64_t i = 0; i < static_cast<int64_t>(set.size()); ++i)
    if (std::isfinite(scores.get(set[i])) && (best_slot < 0 || scores.get(set[i]) > scores.get(set[best_slot]))) best_slot = i;
  set[best_slot] = worst;
  std::sort(set.begin(), set.end());
  test::check_replaced_set_fails(c, in, ref, got, 0, set);
}

TEST_CASE("tokenselect: quality reports the bytes a step reads beside the whole cache", "[unit]") {
  const Case c = test::method_case("tokenselect", kTokenselectShape, "bf16");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const Json q = c.method->quality(c, in, test::reference_as_outputs(c, ref));
  const double full = 2.0 * 4 * 300 * 32 * 2;  // K and V of 4 rows
  CHECK(q["kv_bytes_full"].get<double>() == full);
  CHECK(q["kv_bytes_read_per_step"].get<double>() == 4 * 40 * (2.0 * 32 * 2 + 4));
  CHECK(q["compression_ratio"].get<double>() == Approx(300.0 / 40));
  CHECK(q["compression_point"].get<double>() == Approx(300.0 / 40));
  CHECK(q["selection_bytes_per_step"].get<double>() > full / 2);  // the vote reads every key
  CHECK(q.contains("heldout_attn_recall"));
  CHECK(q["attn_recall"].get<double>() > 0.5);
  CHECK(q["attn_recall"].get<double>() <= 1.0);
  // The companions: the step alone (gather_decode at the budget) and full decode.
  const auto rel = c.method->companions(c);
  REQUIRE(rel.size() == 2);
  CHECK(rel[0].method == "gather_decode");
  CHECK(rel[1].role == "decode_full");
}

TEST_CASE("tokenselect's selection cache: the planted cosine, the cached set on a hit, the fresh one on a miss", "[unit]") {
  const Case hit = parse_case_id("tokenselect/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=1024,budget=128,selection_cache=true/f32/s7");
  const TensorMap in = hit.method->inputs(hit);
  const kvcomp::SelectionParams s = kvcomp::selection_params(hit);
  const std::vector<double> cos = kvcomp::cache_cosines(s, in);
  CHECK(cos[0] == Approx(0.95).margin(1e-6));
  const Reference ref = hit.method->reference(hit, in);
  CHECK(ref.tensors.at("cache_hit").get(0) == 1.0);
  // The kept set: n_init 1, the cached top 111, the local 16.
  CHECK(ref.tensors.at("kept_idx").get(0) == 0.0);
  for (int64_t i = 0; i < s.top_k; ++i) CHECK(ref.tensors.at("kept_idx").get(1 + i) == in.at("topk_cached").get(i));
  CHECK(ref.tensors.at("kept_idx").get(127) == 1023.0);
  REQUIRE(hit.method->check(hit, in, ref, test::reference_as_outputs(hit, ref)).pass());
  {  // a miss claimed far from the threshold
    TensorMap got = test::reference_as_outputs(hit, ref);
    got.at("cache_hit").set(0, 0.0);
    CHECK_FALSE(hit.method->check(hit, in, ref, got).pass());
  }
  {  // the hit claimed but the fresh selection kept
    TensorMap got = test::reference_as_outputs(hit, ref);
    for (int64_t i = 0; i < 128; ++i) got.at("kept_idx").set(i, ref.tensors.at("fresh_idx").get(i));
    bool differs = false;
    for (int64_t i = 0; i < 128; ++i) differs = differs || ref.tensors.at("fresh_idx").get(i) != ref.tensors.at("kept_idx").get(i);
    REQUIRE(differs);
    CHECK_FALSE(hit.method->check(hit, in, ref, got).pass());
  }
  const Case miss = parse_case_id("tokenselect/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=1024,budget=128,selection_cache=true,cache_similarity=0.5/f32/s7");
  const TensorMap min = miss.method->inputs(miss);
  const Reference mref = miss.method->reference(miss, min);
  CHECK(mref.tensors.at("cache_hit").get(0) == 0.0);
  for (int64_t i = 0; i < 128; ++i) CHECK(mref.tensors.at("kept_idx").get(i) == mref.tensors.at("fresh_idx").get(i));
  {  // a hit claimed on a miss
    TensorMap got = test::reference_as_outputs(miss, mref);
    got.at("cache_hit").set(0, 1.0);
    CHECK_FALSE(miss.method->check(miss, min, mref, got).pass());
  }
  // At the threshold (f32 queries planted at cosine 0.9 = θ): either decision passes with its own set.
  const Case edge = parse_case_id("tokenselect/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,budget=64,selection_cache=true,cache_similarity=0.9/f32/s9");
  const TensorMap ein = edge.method->inputs(edge);
  const Reference eref = edge.method->reference(edge, ein);
  TensorMap flipped = test::reference_as_outputs(edge, eref);
  const bool was_hit = eref.tensors.at("cache_hit").get(0) == 1.0;
  flipped.at("cache_hit").set(0, was_hit ? 0.0 : 1.0);
  const kvcomp::SelectionParams es = kvcomp::selection_params(edge);
  for (int64_t r = 0; r < es.kv_heads; ++r) {  // every KV head takes the other decision's set
    int64_t n = 0;
    for (int64_t j = 0; j < es.sinks; ++j) flipped.at("kept_idx").set(r * es.capacity + n++, static_cast<double>(j));
    if (was_hit) {
      for (int64_t i = 0; i < es.capacity; ++i) flipped.at("kept_idx").set(r * es.capacity + i, eref.tensors.at("fresh_idx").get(r * es.capacity + i));
    } else {
      for (int64_t i = 0; i < es.top_k; ++i) flipped.at("kept_idx").set(r * es.capacity + n++, ein.at("topk_cached").get(i));
      for (int64_t j = es.kv_len - es.recent; j < es.kv_len; ++j) flipped.at("kept_idx").set(r * es.capacity + n++, static_cast<double>(j));
    }
  }
  // O over the flipped set: the check recomputes it over the impl's own set, so recompute it too.
  const attention::DenseRows o = kvcomp::sparse_step_rows(edge, es, ein, flipped.at("kept_idx"), flipped.at("kept_len"));
  for (int64_t i = 0; i < o.o.numel(); ++i) flipped.at("O").set(i, o.o.get(i));
  CHECK(edge.method->check(edge, ein, eref, flipped).pass());
}
