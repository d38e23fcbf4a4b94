// The KV-selection contract (reference/kvcomp/scored_selection.h) through a scorer whose scores
// are an input: forced sinks and recent windows, one ranking shared by a sequence's KV heads,
// per-row budgets (ragged rows, checked EXACT and SET), AdaKV's per-row floor with the rest chosen
// across the sequence's heads (the flattened SET check and its negative test), and the quality
// figures and decode companions of ragged rows; and for every registered KV method, its
// companions and the bit-exact gather check.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "reference/kvcomp/scored_selection.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;
using namespace attnbench::kvcomp;

namespace {

// Scores given as an input ("given" [score rows, candidates], with planted ties); per-row budgets
// of sinks + recent + (row % 3)·2 + 1 candidates; a floor fraction of ½.
class GivenScores final : public ScoredSelection {
 public:
  GivenScores(ScoreScope scope, BudgetPolicy policy)
      : ScoredSelection({.name = "given_scores", .summary = "scores from an input", .spec_version = 1}, scope, policy) {
    schema_.add({"budget", ParamType::Int, Value(int64_t{8}), {}, 1.0, 1e6, {}, "kept tokens per KV head"});
    schema_.add({"n_sink", ParamType::Int, Value(int64_t{2}), {}, 0.0, 1e6, {}, "forced sinks"});
    schema_.add({"recent", ParamType::Int, Value(int64_t{3}), {}, 0.0, 1e6, {}, "forced recent tokens"});
    add_n_future();
  }

  TensorMap prefill_inputs(const Case& c) const override {
    TensorMap in = ScoredSelection::prefill_inputs(c);
    const SelectionParams s = selection(c);
    HostTensor given("given", DType::f64, {score_rows(s), std::max<int64_t>(1, s.candidates)});
    const PhiloxStream u(c.seed, "given", kDomainInputs);
    for (int64_t i = 0; i < given.numel(); ++i) given.set(i, std::floor(u.uniform_f64(i) * 12));  // many ties
    in.emplace("given", std::move(given));
    return in;
  }

 protected:
  Keep keep(const Case& c) const override { return {c.i64("n_sink"), c.i64("recent")}; }
  void score(const Case& c, const TensorMap& in, int64_t row, double* out) const override {
    const int64_t C = selection(c).candidates;
    in.at("given").get_row(row * C, C, out);
  }
  double tie_c(const Case&, const TensorMap&, int64_t) const override { return 4.0; }
  std::vector<int64_t> row_budgets(const Case& c) const override {
    const SelectionParams s = selection(c);
    std::vector<int64_t> b(cache_rows(s));
    for (int64_t r = 0; r < cache_rows(s); ++r) b[r] = s.sinks + s.recent + (r % 3) * 2 + 1;
    return b;
  }
  int64_t floor_candidates(const Case& c) const override { return (budget(c) - selection_forced(c)) / 2; }
  int64_t capacity(const Case& c) const override {
    return policy() == BudgetPolicy::per_row ? selection_forced(c) + 5 : ScoredSelection::capacity(c);
  }

 private:
  static int64_t selection_forced(const Case& c) { return c.i64("n_sink") + c.i64("recent"); }
};

Case make(const GivenScores& m, std::map<std::string, Value> params) {
  Case c;
  c.method = &m;
  params.emplace("head_dim", Value(int64_t{8}));
  params.emplace("n_future", Value(int64_t{2}));
  c.params = m.schema().complete(params, "");
  return c;
}

// The tie rule on a row of given scores: the k best candidates, as tokens (offset by the sinks).
std::vector<int64_t> best(const HostTensor& given, int64_t row, int64_t C, int64_t k, int64_t sinks) {
  std::vector<int64_t> order(C);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return given.get(row * C + a) > given.get(row * C + b); });
  std::vector<int64_t> out(order.begin(), order.begin() + k);
  for (int64_t& j : out) j += sinks;
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("scored selection: forced sinks and recent tokens around the best candidates, per KV head", "[unit]") {
  static const GivenScores m(ScoreScope::per_kv_head, BudgetPolicy::uniform);
  const Case c = make(m, {{"batch", Value(int64_t{2})}, {"q_heads", Value(int64_t{4})}, {"kv_heads", Value(int64_t{2})},
                          {"kv_len", Value(int64_t{40})}, {"budget", Value(int64_t{9})}});
  const TensorMap in = m.inputs(c);
  const Reference ref = m.reference(c, in);
  for (int64_t r = 0; r < 4; ++r) {
    std::vector<int64_t> want = {0, 1};
    for (int64_t j : best(in.at("given"), r, 35, 4, 2)) want.push_back(j);
    for (int64_t j = 37; j < 40; ++j) want.push_back(j);
    CHECK(test::kept_tokens(ref.tensors, r) == want);
  }
  CHECK(m.check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
}

TEST_CASE("scored selection: one ranking per sequence keeps the same set in every KV head", "[unit]") {
  static const GivenScores m(ScoreScope::per_sequence, BudgetPolicy::uniform);
  const Case c = make(m, {{"batch", Value(int64_t{3})}, {"q_heads", Value(int64_t{6})}, {"kv_heads", Value(int64_t{3})},
                          {"kv_len", Value(int64_t{30})}});
  const TensorMap in = m.inputs(c);
  CHECK(in.at("given").shape() == Shape{3, 25});
  const Reference ref = m.reference(c, in);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t g = 1; g < 3; ++g) CHECK(test::kept_tokens(ref.tensors, b * 3 + g) == test::kept_tokens(ref.tensors, b * 3));
  CHECK(selection_params(c).shared_scores == 1);
}

TEST_CASE("scored selection: per-row budgets give ragged rows, checked EXACT and SET", "[unit]") {
  static const GivenScores m(ScoreScope::per_kv_head, BudgetPolicy::per_row);
  const Case c = make(m, {{"batch", Value(int64_t{2})}, {"q_heads", Value(int64_t{6})}, {"kv_heads", Value(int64_t{3})},
                          {"kv_len", Value(int64_t{50})}});
  const TensorMap in = m.inputs(c);
  const Reference ref = m.reference(c, in);
  const int64_t cap = 10;
  REQUIRE(selection_params(c).capacity == cap);
  for (int64_t r = 0; r < 6; ++r) {
    const int64_t k = (r % 3) * 2 + 1;
    CHECK(ref.tensors.at("kept_len").get(r) == 5 + k);
    const std::vector<int64_t> kept = test::kept_tokens(ref.tensors, r);
    CHECK(std::vector<int64_t>(kept.begin() + 2, kept.end() - 3) == best(in.at("given"), r, 45, k, 2));
  }
  TensorMap got = test::reference_as_outputs(c, ref);
  REQUIRE(m.check(c, in, ref, got).pass());
  got.at("kept_len").set(1, 7);  // a row keeping one fewer
  CHECK_FALSE(m.check(c, in, ref, got).pass());
  // Quality counts what each row keeps; the companion decodes over per-head lengths.
  const Json q = m.quality(c, in, test::reference_as_outputs(c, ref));
  CHECK(q["kv_bytes_kept"] == 2.0 * (6 * 5 + 2 * (1 + 3 + 5)) * 8 * 4);
  const auto comp = m.companions(c);
  REQUIRE(comp.size() == 2);
  CHECK(std::get<bool>(comp[0].params.at("head_lengths")));
  CHECK_NOTHROW(make_valid_case({comp[0].method, comp[0].phase, comp[0].params, "f32", 1}));
}

TEST_CASE("scored selection: AdaKV's floor per row, the rest across the sequence's heads", "[unit]") {
  static const GivenScores m(ScoreScope::per_kv_head, BudgetPolicy::head_floor);
  const Case c = make(m, {{"batch", Value(int64_t{2})}, {"q_heads", Value(int64_t{4})}, {"kv_heads", Value(int64_t{4})},
                          {"kv_len", Value(int64_t{45})}, {"budget", Value(int64_t{13})}});
  const TensorMap in = m.inputs(c);
  const Reference ref = m.reference(c, in);
  // k = 13 − 5 = 8 candidates per row on average: each row keeps its best 4, and the sequence
  // the best 4·4 others across its heads (ties: smaller g·kv_len + j).
  const HostTensor& given = in.at("given");
  const int64_t C = 40;
  REQUIRE(m.selection(c).capacity == 25);  // at most the forced 5, its floor of 4 and all 4·4 shared
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<std::pair<double, int64_t>> rest;  // (score, g·C + j) of the non-floor candidates
    std::vector<std::vector<int64_t>> want(4);
    for (int64_t g = 0; g < 4; ++g) {
      const std::vector<int64_t> floor = best(given, b * 4 + g, C, 4, 0);
      for (int64_t j : floor) want[g].push_back(j);
      for (int64_t j = 0; j < C; ++j)
        if (!std::count(floor.begin(), floor.end(), j)) rest.emplace_back(given.get((b * 4 + g) * C + j), g * C + j);
    }
    std::stable_sort(rest.begin(), rest.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (int64_t i = 0; i < 16; ++i) want[rest[i].second / C].push_back(rest[i].second % C);
    int64_t total = 0;
    for (int64_t g = 0; g < 4; ++g) {
      std::sort(want[g].begin(), want[g].end());
      const std::vector<int64_t> kept = test::kept_tokens(ref.tensors, b * 4 + g);
      std::vector<int64_t> middle(kept.begin() + 2, kept.end() - 3);
      for (int64_t& j : middle) j -= 2;
      CHECK(middle == want[g]);
      total += static_cast<int64_t>(kept.size());
    }
    CHECK(total == 4 * 13);
  }
  TensorMap got = test::reference_as_outputs(c, ref);
  REQUIRE(m.check(c, in, ref, got).pass());
  // Swap a chosen candidate of row 0 for its lowest-scored one: the flattened set is wrong.
  const std::vector<int64_t> kept = test::kept_tokens(ref.tensors, 0);
  int64_t lowest = 0;
  for (int64_t j = 1; j < C; ++j)
    if (given.get(j) < given.get(lowest)) lowest = j;
  REQUIRE(std::count(kept.begin(), kept.end(), lowest + 2) == 0);  // the lowest is not chosen
  std::vector<int64_t> changed = kept;
  changed[2] = lowest + 2;
  std::sort(changed.begin(), changed.end());
  for (size_t i = 0; i < changed.size(); ++i) got.at("kept_idx").set(static_cast<int64_t>(i), static_cast<double>(changed[i]));
  for (size_t i = 0; i < changed.size(); ++i)
    for (int64_t x = 0; x < 8; ++x) {
      got.at("k_kept").set(static_cast<int64_t>(i) * 8 + x, in.at("k").get(changed[i] * 8 + x));
      got.at("v_kept").set(static_cast<int64_t>(i) * 8 + x, in.at("v").get(changed[i] * 8 + x));
    }
  const CheckReport report = m.check(c, in, ref, got);
  CHECK_FALSE(report.pass());
  CHECK_THAT(report.first_failure(), Catch::StartsWith("kept_idx:"));
}

namespace {

// Parameters that make a method keep `budget` tokens per KV head on average where its own rules
// would shift the mean (pyramidkv: the middle layer of 31; headkv: no shared pool; duoattention:
// every head streaming, its sinks and recent window the budget), or that its forced tokens need.
std::string even_budget(const std::string& method, int64_t budget) {
  if (method == "pyramidkv") return ",layer=15,n_layers=31";
  if (method == "headkv") return ",beta=1000000";
  if (method == "duoattention") return cat(",sink=", budget / 4, ",recent=", budget - budget / 4);
  if (method == "sagekv") return ",n_recent=16";
  return "";
}

// A method's prefill id: the one-shot compression (h2o and tova also have phase decode).
std::string prefill_of(const Method& m) { return m.info().phases.empty() ? m.info().name : m.info().name + "/prefill"; }

}  // namespace

TEST_CASE("every KV method declares gqa decode over its compacted cache and over the full one, no baseline", "[unit]") {
  for (const Method* m : registry().methods()) {
    if (!test::selection_method(*m)) continue;
    INFO(m->info().name);
    const Case c = test::case_from_id(prefill_of(*m) + "/batch=2,q_heads=32,kv_heads=8,head_dim=128,kv_len=4096,budget=512" +
                                      even_budget(m->info().name, 512) + "/bf16/s1");
    const auto comp = c.method->companions(c);
    REQUIRE(comp.size() == 2);
    if (dynamic_cast<const ScoredSelection&>(*m).selection_only()) {  // the step alone, and full decode
      CHECK(comp[0].role == "decode_sparse");
      CHECK(comp[0].method == "gather_decode");
      CHECK(std::get<int64_t>(comp[0].params.at("budget")) == 512);
      CHECK(comp[1].role == "decode_full");
      CHECK(comp[1].method == "gqa");
      for (const auto& r : comp) CHECK_NOTHROW(make_valid_case({r.method, r.phase, r.params, std::string(dtype_name(r.dtype)), c.seed}));
      continue;
    }
    CHECK(comp[0].role == "decode_compressed");
    // Ragged rows: per-head lengths drawn up to twice the mean (compacted_cache.h).
    const bool ragged = dynamic_cast<const ScoredSelection&>(*m).policy() != BudgetPolicy::uniform;
    CHECK(std::get<int64_t>(comp[0].params.at("kv_len")) == (ragged ? 1024 : 512));
    CHECK(comp[1].role == "decode_full");
    CHECK(std::get<int64_t>(comp[1].params.at("kv_len")) == 4096);
    // A merging method's compressed decode reads its merged slots with their bias (bias_decode).
    const bool merges = dynamic_cast<const ScoredSelection&>(*m).merge_rule(c).slots > 0;
    for (const auto& r : comp) {
      CHECK(r.method == (merges && r.role == "decode_compressed" ? "bias_decode" : "gqa"));
      CHECK_NOTHROW(make_valid_case({r.method, r.phase, r.params, std::string(dtype_name(r.dtype)), c.seed}));
    }
    CHECK_FALSE(c.method->baseline(c).has_value());
  }
}

TEST_CASE("every KV method's K and V must be gathered at the impl's own indices, bit for bit", "[unit]") {
  for (const Method* m : registry().methods()) {
    if (!test::selection_method(*m)) continue;
    const Case c = test::case_from_id(prefill_of(*m) + "/q_heads=4,kv_heads=2,head_dim=32,kv_len=200,budget=40,n_future=2" +
                                      even_budget(m->info().name, 40) + "/bf16/s1");
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    if (dynamic_cast<const ScoredSelection&>(*m).selection_only()) {  // no copy: the step's O instead
      CHECK_FALSE(ref.tensors.count("k_kept"));
      CHECK(ref.tensors.count("O"));
      continue;
    }
    for (const char* name : {"k_kept", "v_kept"}) {
      INFO(m->info().name << " " << name);
      TensorMap got = test::reference_as_outputs(c, ref);
      got.at(name).raw()[2 * 300] ^= std::byte{1};  // one bit of one element of a kept row
      const CheckReport report = c.method->check(c, in, ref, got);
      CHECK_FALSE(report.pass());
      CHECK_THAT(report.first_failure(), Catch::StartsWith(std::string(name) + ":"));
    }
  }
}

TEST_CASE("every scored KV method's SET check fails one kept index swapped for the lowest-scored token", "[unit]") {
  // On each method's shared cases: in the first row that keeps a candidate by score, the kept
  // candidate with the highest index becomes the lowest-scored candidate it evicted, K and V
  // regathered there, so only the choice is wrong.
  for (const auto& [method, ids] : test::kvcomp_cases()) {
    if (method == "streaming_llm" || method == "duoattention") continue;  // positional: EXACT, their own negative tests
    bool tested = false;
    for (const std::string& id : ids) {
      const Case c = test::case_from_id(id);
      if (c.phase == "decode") continue;  // the step's own negative test: eviction_step_test.cpp
      const SelectionParams s = selection_params(c);
      if (!scores_needed(c) || tested) continue;
      INFO(id);
      const TensorMap in = c.method->inputs(c);
      const Reference ref = c.method->reference(c, in);
      TensorMap got = test::reference_as_outputs(c, ref);
      REQUIRE(c.method->check(c, in, ref, got).pass());
      const HostTensor& scores = ref.tensors.at("scores");
      const int64_t T = s.kv_len, cap = s.capacity, d = s.head_dim;
      for (int64_t row = 0; row < cache_rows(s) && !tested; ++row) {
        std::vector<int64_t> kept = test::kept_tokens(ref.tensors, row);
        int64_t last = -1, lowest = -1;
        for (size_t i = 0; i < kept.size(); ++i)
          if (std::isfinite(scores.get(row * T + kept[i]))) last = static_cast<int64_t>(i);
        for (int64_t j = s.sinks; j < s.sinks + s.candidates; ++j)
          if (!std::count(kept.begin(), kept.end(), j) && (lowest < 0 || scores.get(row * T + j) < scores.get(row * T + lowest)))
            lowest = j;
        if (last < 0 || lowest < 0) continue;
        kept[last] = lowest;
        std::sort(kept.begin(), kept.end());
        for (size_t i = 0; i < kept.size(); ++i) {
          const int64_t at = row * cap + static_cast<int64_t>(i);
          got.at("kept_idx").set(at, static_cast<double>(kept[i]));
          for (int64_t x = 0; x < d && got.count("k_kept"); ++x) {  // (a selection-only method has no copy)
            got.at("k_kept").set(at * d + x, in.at("k").get((row * T + kept[i]) * d + x));
            got.at("v_kept").set(at * d + x, in.at("v").get((row * T + kept[i]) * d + x));
          }
        }
        const CheckReport report = c.method->check(c, in, ref, got);
        CHECK_FALSE(report.pass());
        CHECK_THAT(report.first_failure(), Catch::StartsWith("kept_idx:"));
        for (const auto& o : report.outputs)
          if (o.output == "k_kept" || o.output == "v_kept") CHECK(o.pass);
        tested = true;
      }
    }
    INFO(method);
    CHECK(tested);
  }
}
