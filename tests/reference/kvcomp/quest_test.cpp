// quest's spec: the page bounds by hand (a tiny case spelled out, and every page of a generated one
// from q, kmin and kmax), the set it reads (the current page, then whole pages by bound, ties to the
// earlier page), the summaries as the exact min and max of each page's keys, the budget rule, the
// edges (a partial current page, the current page alone, one page, a budget over the prompt) and
// the checks' negative test (a kept page's tokens replaced by the lowest-bound page's: the set
// fails, and O, still the reference set's, fails over the impl's). The family's selection is tested
// for every KV method in scored_selection_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/error.h"
#include "attnbench/method.h"
#include "support.h"

using namespace attnbench;

namespace {

// U_p of the full pages before the current one of cache row `row`, from q, kmin and kmax.
std::vector<double> bounds_by_hand(const Case& c, const TensorMap& in, int64_t row) {
  const int64_t Hq = c.i64("q_heads"), Hkv = c.i64("kv_heads"), G = Hq / Hkv, d = c.i64("head_dim");
  const int64_t T = c.i64("kv_len"), P = c.i64("page_size"), pages = (T + P - 1) / P, full = (T - 1) / P;
  const int64_t b = row / Hkv, g = row % Hkv;
  std::vector<double> u(full, 0.0);
  for (int64_t p = 0; p < full; ++p) {
    for (int64_t h = 0; h < G; ++h)
      for (int64_t x = 0; x < d; ++x) {
        const double q = in.at("q").get((b * Hq + g * G + h) * d + x);
        const int64_t e = (row * pages + p) * d + x;
        u[p] += std::max(q * in.at("kmax").get(e), q * in.at("kmin").get(e));
      }
    u[p] /= static_cast<double>(G);
  }
  return u;
}

// The set the header specifies from the bounds: the ⌊budget/P⌋ − 1 pages of largest U (ties: the
// earlier page) token by token, then the current page; every token when budget ≥ T.
std::vector<int64_t> expected_set(const Case& c, const std::vector<double>& u) {
  const int64_t T = c.i64("kv_len"), P = c.i64("page_size"), budget = c.i64("budget");
  std::vector<int64_t> set;
  if (budget >= T) {
    set.resize(T);
    std::iota(set.begin(), set.end(), 0);
    return set;
  }
  std::vector<int64_t> order(u.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return u[a] != u[b] ? u[a] > u[b] : a < b; });
  order.resize(std::min<size_t>(order.size(), static_cast<size_t>(std::max<int64_t>(0, budget / P - 1))));
  std::sort(order.begin(), order.end());
  for (int64_t p : order)
    for (int64_t j = p * P; j < (p + 1) * P; ++j) set.push_back(j);
  for (int64_t j = P * ((T - 1) / P); j < T; ++j) set.push_back(j);
  return set;
}

// 300 tokens in pages of 16: 18 full pages and a current page of 12; 64 tokens buy 3 pages.
const char* kShape = "batch=2,q_heads=8,kv_heads=2,head_dim=32,kv_len=300,budget=64,page_size=16,n_future=4";

}  // namespace

TEST_CASE("quest: the page bounds by hand, whole pages kept, ties to the earlier page", "[unit]") {
  // One KV head of two query heads, head_dim 2, pages of 3: pages 0-2 full, token 9 the current
  // page (partial). q_0 = (1, −2), q_1 = (0.5, 1);
  //   page 0: kmin (0, 0),   kmax (1, 1):   (max(1, 0) + max(−2, 0) + max(.5, 0) + max(1, 0)) / 2 = 1.25
  //   page 1: kmin (−1, −1), kmax (0, 0):   (0 + 2 + 0 + 0) / 2 = 1
  //   page 2: kmin (2, −3),  kmax (3, −1):  (3 + 6 + 1.5 − 1) / 2 = 4.75
  const Case c = test::method_case("quest", "batch=1,q_heads=2,kv_heads=1,head_dim=2,kv_len=10,page_size=3,budget=6,n_future=0");
  TensorMap in = c.method->inputs(c);
  REQUIRE(in.at("q").shape() == Shape{1, 2, 1, 2});
  REQUIRE(in.at("kmin").shape() == Shape{1, 1, 4, 2});
  const double q[4] = {1, -2, 0.5, 1};
  const double lo[4][2] = {{0, 0}, {-1, -1}, {2, -3}, {0, 0}}, hi[4][2] = {{1, 1}, {0, 0}, {3, -1}, {0, 0}};
  for (int e = 0; e < 4; ++e) in.at("q").set(e, q[e]);
  for (int p = 0; p < 4; ++p)
    for (int x = 0; x < 2; ++x) {
      in.at("kmin").set(p * 2 + x, lo[p][x]);
      in.at("kmax").set(p * 2 + x, hi[p][x]);
    }
  const std::vector<double> u = {1.25, 1.0, 4.75};
  CHECK(bounds_by_hand(c, in, 0) == u);
  const Reference ref = c.method->reference(c, in);
  const HostTensor& scores = ref.tensors.at("scores");
  for (int64_t j = 0; j < 9; ++j) CHECK(scores.get(j) == u[j / 3]);  // each page's bound on its tokens
  CHECK(std::isinf(scores.get(9)));                                    // the current page: forced
  // budget 6: one page (⌊6/3⌋ − 1) and the current page's one token.
  CHECK(test::kept_tokens(ref.tensors, 0) == std::vector<int64_t>{6, 7, 8, 9});
  CHECK(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
  // budget 9: two pages; with page 1's bound raised to page 0's, the tie goes to the earlier page.
  const Case c9 = test::method_case("quest", "batch=1,q_heads=2,kv_heads=1,head_dim=2,kv_len=10,page_size=3,budget=9,n_future=0");
  in.at("kmax").set(1 * 2 + 1, 0.5);  // page 1: h1 adds max(0.5, −1) = 0.5 (h0 still 2) → U_1 = 1.25
  REQUIRE(bounds_by_hand(c9, in, 0) == std::vector<double>{1.25, 1.25, 4.75});
  const Reference ref9 = c9.method->reference(c9, in);
  CHECK(test::kept_tokens(ref9.tensors, 0) == std::vector<int64_t>{0, 1, 2, 6, 7, 8, 9});
}

TEST_CASE("quest: the current page and the top pages whole, every row its own bounds", "[unit]") {
  for (const char* dtype : {"f32", "bf16"}) {
    INFO(dtype);
    const Case c = test::method_case("quest", kShape, dtype);
    const TensorMap in = c.method->inputs(c);
    CHECK_FALSE(in.count("q_obs"));  // the step's query replaces the window
    REQUIRE(in.at("q").shape() == Shape{2, 8, 1, 32});
    const Reference ref = c.method->reference(c, in);
    const HostTensor& scores = ref.tensors.at("scores");
    for (int64_t row = 0; row < 4; ++row) {
      const std::vector<double> u = bounds_by_hand(c, in, row);
      REQUIRE(u.size() == 18);
      for (int64_t j = 0; j < 288; ++j) CHECK(scores.get(row * 300 + j) == Approx(u[j / 16]).epsilon(1e-12));
      const std::vector<int64_t> kept = test::kept_tokens(ref.tensors, row);
      CHECK(kept == expected_set(c, u));
      CHECK(kept.size() == 3 * 16 + 12);  // the partial current page counts its own tokens
    }
    CHECK(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
  }
}

TEST_CASE("quest: the summaries are each page's key min and max, bit for bit", "[unit]") {
  for (const char* dtype : {"f32", "f16", "bf16"}) {
    INFO(dtype);
    const Case c = test::method_case("quest", "batch=2,q_heads=4,kv_heads=2,head_dim=24,kv_len=100,budget=32,page_size=16,n_future=0", dtype);
    const TensorMap in = c.method->inputs(c);
    const int64_t T = 100, P = 16, pages = 7, d = 24;
    REQUIRE(in.at("kmin").shape() == Shape{2, 2, pages, d});
    REQUIRE(in.at("kmax").dtype() == c.dtype);
    int64_t mismatches = 0;
    for (int64_t row = 0; row < 4; ++row)
      for (int64_t p = 0; p < pages; ++p)  // the last page holds 4 tokens
        for (int64_t x = 0; x < d; ++x) {
          double lo = INFINITY, hi = -INFINITY;
          for (int64_t j = p * P; j < std::min(T, (p + 1) * P); ++j) {
            lo = std::min(lo, in.at("k").get((row * T + j) * d + x));
            hi = std::max(hi, in.at("k").get((row * T + j) * d + x));
          }
          const int64_t e = (row * pages + p) * d + x;
          mismatches += in.at("kmin").get(e) != lo || in.at("kmax").get(e) != hi;
        }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("quest: rules and edge cases", "[unit]") {
  CHECK_THROWS_WITH(test::method_case("quest", "kv_len=100,budget=8,page_size=16"),
                    Catch::Contains("budget=8 is smaller than page_size=16; a step reads at least the current page"));
  struct Edge {
    const char* params;
    std::vector<int64_t> kept;  // empty: not spelled out
    int64_t size;
  };
  std::vector<int64_t> all12(12), all40(40);
  std::iota(all12.begin(), all12.end(), 0);
  std::iota(all40.begin(), all40.end(), 0);
  const std::vector<Edge> edges = {
      {"kv_len=100,budget=16,page_size=16", {96, 97, 98, 99}, 4},  // the current page alone, partial
      {"kv_len=100,budget=31,page_size=16", {96, 97, 98, 99}, 4},  // ⌊31/16⌋ − 1 = 0 pages
      {"kv_len=96,budget=16,page_size=16", {}, 16},                // the current page alone, full
      {"kv_len=12,budget=16,page_size=16", all12, 12},             // one page: everything read
      {"kv_len=40,budget=64,page_size=8", all40, 40},              // budget ≥ kv_len
      {"kv_len=97,budget=40,page_size=16", {}, 17},                // one page and a current page of 1
      {"kv_len=97,budget=97,page_size=16", {}, 97},                // budget = kv_len: everything
      {"kv_len=200,budget=64,page_size=1", {}, 64},                // pages of one token
  };
  for (const auto& e : edges) {
    INFO(e.params);
    const Case c = test::method_case("quest", std::string("q_heads=4,kv_heads=2,head_dim=16,n_future=2,") + e.params, "bf16");
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    for (int64_t row = 0; row < 2; ++row) {
      const std::vector<int64_t> kept = test::kept_tokens(ref.tensors, row);
      if (!e.kept.empty()) CHECK(kept == e.kept);
      CHECK(static_cast<int64_t>(kept.size()) == e.size);
      CHECK(kept == expected_set(c, bounds_by_hand(c, in, row)));
    }
    const TensorMap got = test::reference_as_outputs(c, ref);
    CHECK(c.method->check(c, in, ref, got).pass());
    const Json q = c.method->quality(c, in, got);
    CHECK(q["selection_only"] == true);
    CHECK(q["kv_bytes_kept"] == q["kv_bytes_full"]);  // the cache stays whole
  }
}

TEST_CASE("quest: the checks fail a kept page replaced by the lowest-bound page", "[unit]") {
  const Case c = test::method_case("quest", kShape, "f16");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  TensorMap got = test::reference_as_outputs(c, ref);
  REQUIRE(c.method->check(c, in, ref, got).pass());
  // Row 1: the kept page of largest bound gives its 16 slots to the page of lowest bound.
  const int64_t row = 1, P = 16;
  const std::vector<double> u = bounds_by_hand(c, in, row);
  const int64_t lowest = std::min_element(u.begin(), u.end()) - u.begin();
  std::vector<int64_t> set = test::kept_tokens(ref.tensors, row);
  int64_t best = -1;
  for (int64_t j : set)
    if (j < 288 && (best < 0 || u[j / P] > u[best])) best = j / P;
  REQUIRE(best >= 0);
  REQUIRE(u[lowest] < u[best]);
  for (int64_t& j : set)
    if (j / P == best) j = lowest * P + j % P;
  std::sort(set.begin(), set.end());
  test::check_replaced_set_fails(c, in, ref, got, row, set);
}
