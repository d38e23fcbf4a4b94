// The SnapKV scorer's other methods, each checked against what it is defined to equal: pyramidkv's
// budgets by hand and its kept set snapkv's at the same budget; headkv's capacities summing to the
// model's base capacity and each head keeping snapkv's set at its own budget; adakv against
// kvpress's AdaKVPress procedure (floor boosted to the maximum, then a global top); tova against
// kvpress's TOVAPress (the last query's attention averaged over heads); sagekv's forced tokens,
// and sagekv on one KV head with no sinks or recent window equal to tova. Also snapkv's
// avg_padded pooling by hand (kvpress's avg_pool1d, padding counted as zeros).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/error.h"
#include "attnbench/method.h"
#include "support.h"

using namespace attnbench;

namespace {

std::vector<std::vector<int64_t>> kept_rows(const Case& c, const Reference& ref) {
  std::vector<std::vector<int64_t>> rows;
  for (int64_t r = 0; r < c.i64("batch") * c.i64("kv_heads"); ++r) rows.push_back(test::kept_tokens(ref.tensors, r));
  return rows;
}

// The k best of scores[0, n) as ascending indices (larger score first, then smaller index).
std::vector<int64_t> top(const std::vector<double>& scores, int64_t k) {
  std::vector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  order.resize(k);
  std::sort(order.begin(), order.end());
  return order;
}

constexpr const char* kCache = "batch=2,q_heads=8,kv_heads=4,head_dim=32,kv_len=600,obs_window=16,n_future=2";

}  // namespace

TEST_CASE("pyramidkv: the authors' pyramid of budgets, and snapkv's set where a layer's budget is snapkv's", "[unit]") {
  // T = 1000, w = 32, B = 128, β = 20, 32 layers: B' = 96, lo = 4.8, hi = 187.2 (under T − w), a
  // step of 182.4/31 per layer: layer 0 keeps round(187.2) + 32 = 219, layer 15 round(98.94) + 32 =
  // 131, layer 31 round(4.8) + 32 = 37; the layers' mean is B within rounding.
  const auto kept_at = [](int64_t layer, const std::string& shape = "kv_len=1000,obs_window=32,budget=128") {
    const Case c = test::method_case("pyramidkv", cat("batch=1,q_heads=2,kv_heads=1,head_dim=8,n_future=0,", shape, ",layer=", layer));
    return test::kept_tokens(c.method->reference(c, c.method->inputs(c)).tensors, 0).size();
  };
  CHECK(kept_at(0) == 219);
  CHECK(kept_at(15) == 131);
  CHECK(kept_at(31) == 37);
  double sum = 0;
  for (int64_t l = 0; l < 32; ++l) sum += static_cast<double>(kept_at(l));
  CHECK(std::abs(sum / 32 - 128) <= 0.5);
  // The clip: T = 300, w = 8, B = 200: hi = 384 − 9.6 ≥ T − w, so hi = 292, lo = 92; layer 0 keeps
  // everything, layer 7 92 + 8.
  CHECK(kept_at(0, "kv_len=300,obs_window=8,budget=200,n_layers=8") == 300);
  CHECK(kept_at(7, "kv_len=300,obs_window=8,budget=200,n_layers=8") == 100);

  const Case pyr = test::method_case("pyramidkv", std::string(kCache) + ",budget=100,layer=3,n_layers=8", "bf16", 3);
  const Reference ref = pyr.method->reference(pyr, pyr.method->inputs(pyr));
  const int64_t n = static_cast<int64_t>(ref.tensors.at("kept_len").get(0));
  const Case snap = test::method_case("snapkv", cat(kCache, ",budget=", n), "bf16", 3);
  CHECK(kept_rows(pyr, ref) == kept_rows(snap, snap.method->reference(snap, snap.method->inputs(snap))));
}

TEST_CASE("headkv: capacities from the head scores, ragged, each head snapkv's set at its own budget", "[unit]") {
  // 4 layers × 4 KV heads, base capacity 96 with w = 16: C' = 80, u = ⌊80/1.005⌋ = 79, so 79·16
  // tokens are shared out by the head scores and every head has a floor of 1.
  std::vector<int64_t> all_heads;
  for (int64_t layer = 0; layer < 4; ++layer) {
    const Case c = test::method_case("headkv", cat(kCache, ",budget=96,n_layers=4,layer=", layer), "f32", 7);
    const Reference ref = c.method->reference(c, c.method->inputs(c));
    for (int64_t g = 0; g < 4; ++g) {
      const auto len = static_cast<int64_t>(ref.tensors.at("kept_len").get(g));
      CHECK(len >= 16 + 1);
      CHECK(ref.tensors.at("kept_len").get(4 + g) == len);  // the same capacity in every sequence
      all_heads.push_back(len - 16);
    }
    if (layer == 1) {
      // Row by row, the top of snapkv's scores at that row's own budget.
      for (int64_t r = 0; r < 8; ++r) {
        const Case snap = test::method_case("snapkv", cat(kCache, ",budget=", ref.tensors.at("kept_len").get(r)), "f32", 7);
        CHECK(test::kept_tokens(ref.tensors, r) ==
              test::kept_tokens(snap.method->reference(snap, snap.method->inputs(snap)).tensors, r));
      }
    }
  }
  const int64_t total = std::accumulate(all_heads.begin(), all_heads.end(), int64_t{0});
  CHECK(std::abs(total - 16 * 80) <= 8);  // rounding each of 16 heads
  CHECK(*std::max_element(all_heads.begin(), all_heads.end()) > *std::min_element(all_heads.begin(), all_heads.end()));
  // A base capacity over the prompt compresses no head (the authors' rule).
  const Case over = test::method_case("headkv", "batch=1,q_heads=4,kv_heads=2,head_dim=16,kv_len=40,obs_window=8,budget=64,n_future=0");
  const Reference all = over.method->reference(over, over.method->inputs(over));
  for (int64_t r = 0; r < 2; ++r) CHECK(test::kept_tokens(all.tensors, r).size() == 40);
}

TEST_CASE("adakv keeps what kvpress's AdaKVPress keeps: the floor boosted, then the global top", "[unit]") {
  // kvpress: scores with the window at the maximum; each head's top n_safe = ⌊α·B⌋ set to the
  // largest float; prune the H·(T − B) lowest of the sequence's flattened [H·T] scores.
  for (const double alpha : {0.2, 0.5, 0.9}) {
    INFO("alpha=" << alpha);
    const Case c = test::method_case("adakv", cat(kCache, ",budget=64,alpha=", alpha), "f32", 11);
    const Reference ref = c.method->reference(c, c.method->inputs(c));
    const HostTensor& scores = ref.tensors.at("scores");  // +inf on the window
    const int64_t H = 4, T = 600, B = 64, safe = static_cast<int64_t>(std::floor(alpha * B));
    for (int64_t b = 0; b < 2; ++b) {
      std::vector<double> flat(H * T);
      for (int64_t g = 0; g < H; ++g) {
        std::vector<double> row(T);
        for (int64_t j = 0; j < T; ++j) row[j] = std::min(scores.get((b * H + g) * T + j), 1e300);  // the window: max
        for (int64_t j : top(row, safe)) row[j] = 1e308;
        std::copy(row.begin(), row.end(), flat.begin() + g * T);
      }
      std::vector<std::vector<int64_t>> want(H);
      for (int64_t f : top(flat, H * B)) want[f / T].push_back(f % T);
      for (int64_t g = 0; g < H; ++g) CHECK(test::kept_tokens(ref.tensors, b * H + g) == want[g]);
    }
    CHECK(c.method->check(c, c.method->inputs(c), ref, test::reference_as_outputs(c, ref)).pass());
  }
}

TEST_CASE("tova keeps what kvpress's TOVAPress keeps: the last query's attention averaged over heads", "[unit]") {
  const Case c = test::method_case("tova/prefill", "batch=2,q_heads=8,kv_heads=2,head_dim=32,kv_len=500,budget=50,n_future=2", "f32", 4);
  const TensorMap in = c.method->inputs(c);
  // q_obs is the last query of the family's 32-query window, bit for bit (knorm's cache).
  REQUIRE(in.at("q_obs").shape() == Shape{2, 8, 1, 32});
  const Case window = test::method_case("snapkv", "batch=2,q_heads=8,kv_heads=2,head_dim=32,kv_len=500,obs_window=32,budget=50,n_future=2", "f32", 4);
  const TensorMap full = window.method->inputs(window);
  for (int64_t h = 0; h < 16; ++h)
    for (int64_t x = 0; x < 32; ++x) CHECK(in.at("q_obs").get(h * 32 + x) == full.at("q_obs").get((h * 32 + 31) * 32 + x));
  CHECK(in.at("k").get(12345) == full.at("k").get(12345));
  const Reference ref = c.method->reference(c, in);
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<double> score(499, 0.0);
    for (int64_t h = 0; h < 8; ++h) {
      std::vector<double> logit(500);
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < 500; ++j) {
        double dot = 0;
        for (int64_t x = 0; x < 32; ++x) dot += in.at("q_obs").get((b * 8 + h) * 32 + x) * in.at("k").get(((b * 2 + h / 4) * 500 + j) * 32 + x);
        mx = std::max(mx, logit[j] = dot / std::sqrt(32.0));
      }
      for (double l : logit) sum += std::exp(l - mx);
      for (int64_t j = 0; j < 499; ++j) score[j] += std::exp(logit[j] - mx) / sum / 8;
    }
    std::vector<int64_t> want = top(score, 49);
    want.push_back(499);  // kvpress pads the last token with the maximum
    for (int64_t g = 0; g < 2; ++g) CHECK(test::kept_tokens(ref.tensors, b * 2 + g) == want);
  }
}

TEST_CASE("sagekv: sinks, the last token's top-k, the recent window and the last token", "[unit]") {
  CHECK_THROWS_WITH(test::method_case("sagekv", "kv_len=100,budget=20,n_sink=4,n_recent=16"), Catch::Contains("n_sink + n_recent + 1"));
  const Case c = test::method_case("sagekv", "batch=1,q_heads=8,kv_heads=2,head_dim=32,kv_len=300,budget=40,n_sink=3,n_recent=10,n_future=2", "bf16", 2);
  const Reference ref = c.method->reference(c, c.method->inputs(c));
  for (int64_t r = 0; r < 2; ++r) {
    const std::vector<int64_t> kept = test::kept_tokens(ref.tensors, r);
    REQUIRE(kept.size() == 40);
    CHECK(std::vector<int64_t>(kept.begin(), kept.begin() + 3) == std::vector<int64_t>{0, 1, 2});
    for (int64_t i = 0; i < 11; ++i) CHECK(kept[40 - 11 + i] == 289 + i);  // [T − W − 1, T)
  }
  // On one KV head with nothing forced but the last token, sagekv is tova.
  const Case sage = test::method_case("sagekv", "batch=2,q_heads=4,kv_heads=1,head_dim=32,kv_len=400,budget=33,n_sink=0,n_recent=0,n_future=2", "f16", 6);
  const Case tova = test::method_case("tova/prefill", "batch=2,q_heads=4,kv_heads=1,head_dim=32,kv_len=400,budget=33,n_future=2", "f16", 6);
  CHECK(kept_rows(sage, sage.method->reference(sage, sage.method->inputs(sage))) ==
        kept_rows(tova, tova.method->reference(tova, tova.method->inputs(tova))));
  // More forced tokens than the prompt: everything.
  const Case all = test::method_case("sagekv", "batch=1,q_heads=2,kv_heads=1,head_dim=8,kv_len=50,budget=80,n_recent=64,n_future=0");
  CHECK(test::kept_tokens(all.method->reference(all, all.method->inputs(all)).tensors, 0).size() == 50);
}

TEST_CASE("snapkv's avg_padded pooling divides by the kernel, padding counted as zeros (kvpress)", "[unit]") {
  // snapkv_test.cpp's hand case (two heads, keys [0, 1, 0, 0, 0, 0], window 2, kernel 3): head 0's
  // window scores are h0 everywhere, head 1's [lo, hi, lo, lo] over the prefix.
  const Case c = test::method_case("snapkv", "batch=1,q_heads=2,kv_heads=1,head_dim=1,kv_len=6,obs_window=2,budget=4,pool_kernel=3,n_future=1,pool=avg_padded");
  TensorMap in = c.method->inputs(c);
  const double l3 = std::log(3.0);
  const double q[4] = {0, 0, l3, l3}, k[6] = {0, 1, 0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) in.at("q_obs").set(i, q[i]);
  for (int j = 0; j < 6; ++j) in.at("k").set(j, k[j]);
  const double e3 = std::exp(static_cast<double>(static_cast<float>(l3)));
  const double h0 = 11.0 / 60, hi = (e3 / (4 + e3) + e3 / (5 + e3)) / 2, lo = (1 / (4 + e3) + 1 / (5 + e3)) / 2;
  const Reference ref = c.method->reference(c, in);
  const HostTensor& s = ref.tensors.at("scores");
  CHECK(s.get(0) == Approx((2 * h0 / 3 + (lo + hi) / 3) / 2).epsilon(1e-14));
  CHECK(s.get(1) == Approx((h0 + (2 * lo + hi) / 3) / 2).epsilon(1e-14));
  CHECK(s.get(3) == Approx((2 * h0 / 3 + 2 * lo / 3) / 2).epsilon(1e-14));
}

TEST_CASE("h2o keeps what kvpress's ObservedAttentionPress keeps: causal column sums over every prompt query", "[unit]") {
  // kvpress: Σ_i P_{h,i,j} over the prompt's queries (eager attention), / (T − j), the mean over the
  // group, the top n_kept; with recent_share 0 and mean_visible, h2o is that. With the default
  // norm (sum) and half the budget recent, the heavy hitters are the largest raw sums.
  const int64_t T = 120, d = 16, H = 4, G = 2;
  for (const char* mode : {"norm=mean_visible,recent_share=0", "norm=sum,recent_share=0.5"}) {
    INFO(mode);
    const Case c = test::method_case("h2o/prefill", cat("batch=1,q_heads=4,kv_heads=2,head_dim=16,kv_len=120,budget=24,n_future=2,", mode), "f32", 9);
    const TensorMap in = c.method->inputs(c);
    REQUIRE(in.at("q_obs").shape() == Shape{1, H, T, d});
    const bool visible = c.str("norm") == "mean_visible";
    const int64_t recent = visible ? 0 : 12;
    const Reference ref = c.method->reference(c, in);
    for (int64_t g = 0; g < 2; ++g) {
      std::vector<double> score(T - recent, 0.0);
      for (int64_t hh = 0; hh < G; ++hh) {
        const int64_t h = g * G + hh;
        for (int64_t i = 0; i < T; ++i) {
          std::vector<double> logit(i + 1);
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j <= i; ++j) {
            double dot = 0;
            for (int64_t x = 0; x < d; ++x) dot += in.at("q_obs").get((h * T + i) * d + x) * in.at("k").get((g * T + j) * d + x);
            mx = std::max(mx, logit[j] = dot / 4.0);
          }
          for (double l : logit) sum += std::exp(l - mx);
          for (int64_t j = 0; j <= i && j < T - recent; ++j) score[j] += std::exp(logit[j] - mx) / sum / G;
        }
      }
      if (visible)
        for (int64_t j = 0; j < T; ++j) score[j] /= static_cast<double>(T - j);
      std::vector<int64_t> want = top(score, 24 - recent);
      for (int64_t j = T - recent; j < T; ++j) want.push_back(j);
      CHECK(test::kept_tokens(ref.tensors, g) == want);
    }
  }
  // The cache is everyone's: the last 32 prompt queries are G-KV's window, the keys its keys.
  const Case h2o = test::method_case("h2o/prefill", "batch=1,q_heads=4,kv_heads=2,head_dim=16,kv_len=120,budget=24,n_future=2", "bf16", 3);
  const Case snap = test::method_case("snapkv", "batch=1,q_heads=4,kv_heads=2,head_dim=16,kv_len=120,obs_window=32,budget=40,n_future=2", "bf16", 3);
  const TensorMap a = h2o.method->inputs(h2o), b = snap.method->inputs(snap);
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t x = 0; x < 32 * 16; ++x) CHECK(a.at("q_obs").get((h * 120 + 88) * 16 + x) == b.at("q_obs").get(h * 32 * 16 + x));
  CHECK(a.at("k").get(777) == b.at("k").get(777));
  CHECK(a.at("q_future").get(5) == b.at("q_future").get(5));
}
