// SET: index sets with tie exchange, and gathers at the impl's own indices.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_set.h"

using namespace attnbench;

namespace {

// One row of 8 candidates plus two always-kept tokens (8, 9); the reference keeps 2 candidates.
struct SetFixture {
  OutputDecl decl{"kept_idx", DType::i32, {1, 4}, CheckClass::SET, "kept_len", 1, -1.0, Order::ascending};
  HostTensor scores{"scores", DType::f64, {1, 10}};
  HostTensor ref{"kept_idx", DType::i32, {1, 4}}, ref_len{"kept_len", DType::i32, {1}};
  HostTensor len{"kept_len", DType::i32, {1}};
  TieBand band{{4.0}, 1.0};

  SetFixture() {
    const double s[10] = {0.5, 0.1, 0.3, 0.3000000001, 0.02, 0.4, 0.01, 0.2, INFINITY, INFINITY};
    for (int j = 0; j < 10; ++j) scores.set(j, s[j]);
    set_row(ref, {0, 5, 8, 9});
    ref_len.set(0, 4);
    len.set(0, 4);
  }
  static void set_row(HostTensor& t, std::vector<int> v) {
    for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  }
  OutputCheck run(std::vector<int> kept) {
    HostTensor got("kept_idx", DType::i32, {1, 4});
    set_row(got, kept);
    return check_set(decl, ref, ref_len, got, len, scores, band);
  }
};

}  // namespace

TEST_CASE("SET: the reference's own set passes with no swaps", "[unit]") {
  SetFixture f;
  const OutputCheck o = f.run({0, 5, 8, 9});
  CHECK(o.pass);
  CHECK(o.metrics["n_tie_swaps"] == 0);
}

TEST_CASE("SET: swapping one kept index for the lowest-scored token fails", "[unit]") {
  SetFixture f;
  const OutputCheck o = f.run({0, 6, 8, 9});  // 5 (0.4, kept) → 6 (0.01, the lowest)
  CHECK_FALSE(o.pass);
  CHECK_THAT(o.message, Catch::Contains("index 6"));
}

TEST_CASE("SET: an exchange inside the tie band passes and is counted", "[unit]") {
  SetFixture f;
  // Reference threshold s_k = 0.4 (index 5); make index 2 tie with it within the band.
  f.scores.set(2, 0.4 * (1 - 1e-7));  // |Δ| = 4e-8 ≤ ε·(4·0.4 + 1·0.5) ≈ 2.5e-7
  const OutputCheck o = f.run({0, 2, 8, 9});
  CHECK(o.pass);
  CHECK(o.metrics["n_tie_swaps"] == 1);
  CHECK(o.metrics["max_tie_swaps"] == 1);
  // Just outside the band it fails.
  f.scores.set(2, 0.4 * (1 - 1e-5));
  CHECK_FALSE(f.run({0, 2, 8, 9}).pass);
}

TEST_CASE("SET: an always-kept token must be kept", "[unit]") {
  SetFixture f;
  const OutputCheck o = f.run({0, 5, 7, 8});
  CHECK_FALSE(o.pass);
}

TEST_CASE("SET: a row of a different size fails", "[unit]") {
  SetFixture f;
  HostTensor got("kept_idx", DType::i32, {1, 4}), len("kept_len", DType::i32, {1});
  SetFixture::set_row(got, {0, 8, 9, -1});
  len.set(0, 3);
  CHECK_FALSE(check_set(f.decl, f.ref, f.ref_len, got, len, f.scores, f.band).pass);
}

TEST_CASE("gather: equal bits pass, one flipped bit fails", "[unit]") {
  HostTensor src("k", DType::bf16, {1, 5, 3});
  for (int64_t i = 0; i < src.numel(); ++i) src.set(i, 0.25 * static_cast<double>(i) - 1.0);
  HostTensor idx("kept_idx", DType::i32, {1, 2}), len("kept_len", DType::i32, {1});
  idx.set(0, 1);
  idx.set(1, 4);
  len.set(0, 2);
  HostTensor got("k_kept", DType::bf16, {1, 2, 3});
  for (int i = 0; i < 3; ++i) {
    got.set(i, src.get(3 + i));
    got.set(3 + i, src.get(12 + i));
  }
  const OutputDecl d{"k_kept", DType::bf16, {1, 2, 3}, CheckClass::SET, "kept_len", 1, 0.0};
  CHECK(check_gather(d, src, idx, len, got).pass);
  got.raw()[5 * 2] ^= std::byte{1};
  const OutputCheck o = check_gather(d, src, idx, len, got);
  CHECK_FALSE(o.pass);
  CHECK(o.metrics["gather_mismatches"] == 1);
}
