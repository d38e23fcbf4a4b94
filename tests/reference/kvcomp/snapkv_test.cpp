// snapkv's spec: a hand-computed case, the edge cases, G-KV's planted structure, and the SET check's
// negative test (a kept index swapped for the lowest-scored token). The family's checks and
// companions are tested for every KV method in scored_selection_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/caseid.h"
#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "reference/kvcomp/gkv.h"
#include "support.h"

using namespace attnbench;

namespace {

HostTensor filled(const char* name, Shape shape, std::vector<double> v) {
  HostTensor t(name, DType::f32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

// batch 1, two query heads sharing one KV head, head_dim 1 (scale 1), kv_len 6, window 2, budget 4:
// head 0's queries are 0 (uniform softmax), head 1's are ln 3 against keys [0, 1, 0, 0, 0, 0].
TensorMap hand_inputs() {
  TensorMap in;
  const double l3 = std::log(3.0);
  in.emplace("q_obs", filled("q_obs", {1, 2, 2, 1}, {0, 0, l3, l3}));
  in.emplace("k", filled("k", {1, 1, 6, 1}, {0, 1, 0, 0, 0, 0}));
  in.emplace("v", filled("v", {1, 1, 6, 1}, {1, 2, 3, 4, 5, 6}));
  in.emplace("q_future", filled("q_future", {1, 2, 1, 1}, {0, 0}));
  return in;
}

constexpr const char* kHand = "batch=1,q_heads=2,kv_heads=1,head_dim=1,kv_len=6,obs_window=2,budget=4,pool_kernel=3,n_future=1";

}  // namespace

TEST_CASE("snapkv: hand-computed scores and selection, max and avg pooling", "[unit]") {
  // Window query 0 sees keys 0..4, query 1 sees 0..5 (bottom-right causal).
  // Head 0: a_j = (1/5 + 1/6)/2 = 11/60 for every prefix key.
  // Head 1: exp logits [1, 3, 1, 1, 1(, 1)]: a_1 = (3/7 + 3/8)/2 = 45/112, the others 15/112 —
  // with 3 = e^(ln 3 rounded to f32), as the f32 inputs hold it.
  const double e3 = std::exp(static_cast<double>(static_cast<float>(std::log(3.0))));
  const double h0 = 11.0 / 60, hi = (e3 / (4 + e3) + e3 / (5 + e3)) / 2, lo = (1 / (4 + e3) + 1 / (5 + e3)) / 2;
  CHECK(hi == Approx(45.0 / 112).epsilon(1e-7));
  SECTION("max pooling, kernel 3: head 1 pools to [hi, hi, hi, lo]; ties keep the smaller index") {
    const Case c = test::method_case("snapkv", std::string(kHand) + ",pool=max");
    const Reference ref = c.method->reference(c, hand_inputs());
    const HostTensor& s = ref.tensors.at("scores");
    CHECK(s.get(0) == Approx((h0 + hi) / 2).epsilon(1e-14));
    CHECK(s.get(2) == Approx((h0 + hi) / 2).epsilon(1e-14));
    CHECK(s.get(3) == Approx((h0 + lo) / 2).epsilon(1e-14));
    CHECK(std::isinf(s.get(4)));
    const HostTensor& idx = ref.tensors.at("kept_idx");
    CHECK(std::vector<double>{idx.get(0), idx.get(1), idx.get(2), idx.get(3)} == std::vector<double>{0, 1, 4, 5});
    CHECK(ref.tensors.at("kept_len").get(0) == 4);
    CHECK(ref.tensors.at("v_kept").get(2) == 5);
  }
  SECTION("avg pooling ignores padding: head 1 pools to [(lo+hi)/2, (2lo+hi)/3, (2lo+hi)/3, lo]") {
    const Case c = test::method_case("snapkv", std::string(kHand) + ",pool=avg");
    const Reference ref = c.method->reference(c, hand_inputs());
    const HostTensor& s = ref.tensors.at("scores");
    CHECK(s.get(0) == Approx((h0 + (lo + hi) / 2) / 2).epsilon(1e-14));
    CHECK(s.get(1) == Approx((h0 + (2 * lo + hi) / 3) / 2).epsilon(1e-14));
    CHECK(s.get(3) == Approx((h0 + lo) / 2).epsilon(1e-14));
    const HostTensor& idx = ref.tensors.at("kept_idx");
    CHECK(idx.get(0) == 0);
    CHECK(idx.get(1) == 1);  // 1 and 2 tie exactly: the smaller index
  }
}

TEST_CASE("snapkv: budget rules and the keep-everything edge cases", "[unit]") {
  CHECK_THROWS_WITH(test::method_case("snapkv", "kv_len=100,obs_window=32,budget=16"), Catch::Contains("obs_window"));
  CHECK_THROWS_WITH(test::method_case("snapkv", "kv_len=100,pool_kernel=4"), Catch::Contains("odd"));
  SECTION("budget = obs_window keeps exactly the window") {
    const Case c = test::method_case("snapkv", "q_heads=4,kv_heads=2,head_dim=16,kv_len=50,obs_window=8,budget=8,n_future=2");
    const Reference ref = c.method->reference(c, c.method->inputs(c));
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t i = 0; i < 8; ++i) CHECK(ref.tensors.at("kept_idx").get(r * 8 + i) == 42 + i);
  }
  for (const char* params : {"q_heads=4,kv_heads=2,head_dim=16,kv_len=20,obs_window=8,budget=30,n_future=2",
                             "q_heads=4,kv_heads=2,head_dim=16,kv_len=20,obs_window=20,budget=24,n_future=2",
                             "q_heads=4,kv_heads=2,head_dim=16,kv_len=20,obs_window=25,budget=25,n_future=2"}) {
    INFO(params);
    const Case c = test::method_case("snapkv", params, "bf16");
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    const int64_t budget = c.i64("budget");
    for (int64_t r = 0; r < 2; ++r) {
      CHECK(ref.tensors.at("kept_len").get(r) == 20);
      for (int64_t i = 0; i < budget; ++i) CHECK(ref.tensors.at("kept_idx").get(r * budget + i) == (i < 20 ? i : -1));
    }
    const TensorMap got = test::reference_as_outputs(c, ref);
    CHECK(c.method->check(c, in, ref, got).pass());
    CHECK(c.method->quality(c, in, got)["compression_ratio"] == 1.0);
    CHECK(c.method->quality(c, in, got)["out_rel_l2"] == 0.0);
  }
}

TEST_CASE("snapkv: the SET check fails a kept index swapped for the lowest-scored token", "[unit]") {
  const Case c = test::method_case("snapkv", "batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=400,obs_window=16,budget=64,n_future=4", "f16", 5);
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  TensorMap got = test::reference_as_outputs(c, ref);
  REQUIRE(c.method->check(c, in, ref, got).pass());

  // Row (1, 0): replace its highest-index kept prefix token by the lowest-scored prefix token, and
  // regather K and V at the new indices so only the selection is wrong.
  const int64_t row = 2, budget = 64, P = 400 - 16, d = 64;
  const HostTensor& scores = ref.tensors.at("scores");
  int64_t lowest = 0;
  for (int64_t j = 1; j < P; ++j)
    if (scores.get(row * 400 + j) < scores.get(row * 400 + lowest)) lowest = j;
  HostTensor& idx = got.at("kept_idx");
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < budget; ++i) kept.push_back(static_cast<int64_t>(idx.get(row * budget + i)));
  kept[budget - 16 - 1] = lowest;
  std::sort(kept.begin(), kept.end());
  for (int64_t i = 0; i < budget; ++i) {
    idx.set(row * budget + i, static_cast<double>(kept[i]));
    for (int64_t x = 0; x < d; ++x) {
      got.at("k_kept").set((row * budget + i) * d + x, in.at("k").get((row * 400 + kept[i]) * d + x));
      got.at("v_kept").set((row * budget + i) * d + x, in.at("v").get((row * 400 + kept[i]) * d + x));
    }
  }
  const CheckReport report = c.method->check(c, in, ref, got);
  CHECK_FALSE(report.pass());
  CHECK_THAT(report.first_failure(), Catch::StartsWith("kept_idx:") && Catch::Contains(std::to_string(lowest)));
  // The gathers themselves are right.
  for (const auto& o : report.outputs)
    if (o.output != "kept_idx") CHECK(o.pass);
}

TEST_CASE("G-KV plants sinks, needles, recency and exact ties; snapkv finds the structure", "[unit]") {
  const Case c = test::method_case("snapkv", "batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=1024,obs_window=32,budget=128,n_future=16,ties=true");
  const TensorMap in = c.method->inputs(c);
  // Exact ties: odd prefix positions past the sinks copy the key before them.
  const HostTensor& k = in.at("k");
  for (int64_t j : {5, 7, 101, 991})
    for (int64_t x = 0; x < 64; ++x) CHECK(k.get(j * 64 + x) == k.get((j - 1) * 64 + x));
  const Reference ref = c.method->reference(c, in);
  // Sinks are kept by every KV head, and the kept tokens carry far more of the future queries'
  // attention than their share of the cache.
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t i = 0; i < 4; ++i) CHECK(ref.tensors.at("kept_idx").get(r * 128 + i) == i);
  const Json q = c.method->quality(c, in, test::reference_as_outputs(c, ref));
  CHECK(q["compression_ratio"] == 8.0);
  CHECK(q["attn_recall"].get<double>() > 0.5);
  CHECK(q["out_cos"].get<double>() > 0.9);
  // Ties between equal scores go to the smaller index.
  const HostTensor &s = ref.tensors.at("scores"), &idx = ref.tensors.at("kept_idx");
  std::vector<char> kept(1024, 0);
  for (int64_t i = 0; i < 128; ++i) kept[static_cast<int64_t>(idx.get(i))] = 1;
  for (int64_t a = 0; a < 992; ++a)
    for (int64_t b = a + 1; b < 992; ++b)
      if (s.get(a) == s.get(b) && kept[b]) CHECK(kept[a]);
}

TEST_CASE("G-KV is deterministic and independent of the thread count", "[unit]") {
  kvcomp::GkvConfig cfg;
  cfg.batch = 2;
  cfg.kv_len = 300;
  const TensorMap a = kvcomp::generate_gkv(cfg, DType::bf16, 9), b = kvcomp::generate_gkv(cfg, DType::bf16, 9);
  CHECK(hash_tensors(a) == hash_tensors(b));
  CHECK(hash_tensors(a) != hash_tensors(kvcomp::generate_gkv(cfg, DType::bf16, 10)));
}

TEST_CASE("snapkv whose budget keeps only the window scores nothing: its work is the compaction, a copy", "[unit]") {
  // Counting the window's flops there put a committed row at 50× the fp32 FMA rate.
  const Case window_only = test::method_case(
      "snapkv", "batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=500,obs_window=32,budget=32");
  const Work w = window_only.method->work(window_only);
  CHECK(w.flops == 0);
  CHECK(w.bound == Bound::copy);
  const Case scored = test::method_case("snapkv", "batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=500,obs_window=32,budget=64");
  CHECK(scored.method->work(scored).flops > 0);
  CHECK(scored.method->work(scored).bound == Bound::compute);
}
