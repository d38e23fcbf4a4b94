// SEMI: sequences equal up to the first boundary event; counts with slack.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/check_semi.h"
#include "attnbench/check_set.h"

using namespace attnbench;

namespace {
HostTensor tensor(const char* name, Shape shape, std::vector<double> v) {
  HostTensor t(name, DType::i32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}
const OutputDecl kTokens{"tokens", DType::i32, {2, 3}, CheckClass::SEMI, "emitted", 1, -1.0};
}  // namespace

TEST_CASE("SEMI: boundary predicates follow the derived constants", "[unit]") {
  CHECK(race_is_boundary(race_margin(1.0, 1.0)));
  CHECK(race_is_boundary(race_margin(-3.0, -3.0 - 100 * kEpsF32)));                   // 100ε·3 / 3 = 100ε ≤ 144ε
  CHECK_FALSE(race_is_boundary(race_margin(-3.0, -3.0 - 3 * 200 * kEpsF32)));         // 200ε
  CHECK(race_margin(0.5, -INFINITY) == INFINITY);
  CHECK(accept_is_boundary(accept_margin(0.5f, 0.5, 1.0)));
  CHECK(accept_is_boundary(accept_margin(0.5, 0.5 + kEpsF32, 1.0)));
  CHECK_FALSE(accept_is_boundary(accept_margin(0.5, 0.5 + 3 * kEpsF32, 1.0)));
  CHECK(accept_margin(0.3, 0.2, 0.0) == -INFINITY);  // q = 0, p > 0: accepted for certain
}

TEST_CASE("SEMI: sequences must match until the cut", "[unit]") {
  const HostTensor ref = tensor("tokens", {2, 3}, {4, 7, 1, 2, -1, -1}), ref_len = tensor("emitted", {2}, {3, 1});
  const std::vector<int64_t> no_cut{kNoCut, kNoCut};
  CHECK(check_semi(kTokens, ref, ref_len, ref, ref_len, no_cut).pass);

  // A different token where no boundary event was found fails.
  const HostTensor wrong = tensor("tokens", {2, 3}, {4, 7, 2, 2, -1, -1});
  CHECK_FALSE(check_semi(kTokens, ref, ref_len, wrong, ref_len, no_cut).pass);
  // The same difference after a boundary event at position 2 of row 0 passes and is counted.
  const OutputCheck o = check_semi(kTokens, ref, ref_len, wrong, ref_len, {2, kNoCut});
  CHECK(o.pass);
  CHECK(o.metrics["n_boundary_cases"] == 1);
  // A boundary at position 1 allows a different length, but the row must reach position 1.
  const HostTensor shorter = tensor("tokens", {2, 3}, {4, 9, -1, 2, -1, -1}), short_len = tensor("emitted", {2}, {2, 1});
  CHECK(check_semi(kTokens, ref, ref_len, shorter, short_len, {1, kNoCut}).pass);
  const HostTensor too_short_len = tensor("emitted", {2}, {1, 1});
  CHECK_FALSE(check_semi(kTokens, ref, ref_len, shorter, too_short_len, {1, kNoCut}).pass);
  // Without a cut, a different length fails.
  CHECK_FALSE(check_semi(kTokens, ref, ref_len, shorter, short_len, no_cut).pass);
}

TEST_CASE("SEMI: counts are equal unless loosened or excluded", "[unit]") {
  const OutputDecl d{"accepted_token_num", DType::i32, {3}, CheckClass::SEMI};
  const HostTensor ref = tensor("a", {3}, {2, 3, 0}), got = tensor("a", {3}, {2, 4, 5});
  CHECK_FALSE(check_semi_counts(d, ref, got, {0, 0, 0}).pass);
  CHECK_FALSE(check_semi_counts(d, ref, got, {0, 1, 0}).pass);
  const OutputCheck o = check_semi_counts(d, ref, got, {0, 1, -1});
  CHECK(o.pass);
  CHECK(o.metrics["excluded_rows"] == 1);
}
