// ZeroMerge's references. zeromerge_decode (reference/kvcomp/zeromerge_decode.cpp): the planted
// start is the prefill init's layout, the ring cycles over the last R − 1 slots, the reference's
// own steps pass its check, and the check fails a wrong merge, a wrong dense slot, a miscounted
// weight and attention without the log-weight compensation. zeromerge (the prefill init,
// reference/kvcomp/zeromerge.cpp, with the family's merged slots): the groups of the evicted tokens
// and their weights, and the check failing slots merged from another grouping or miscounted.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/cases.h"
#include "method_cases.h"
#include "reference/kvcomp/zeromerge_common.h"
#include "support.h"

using namespace attnbench;
using namespace attnbench::kvcomp;

namespace {

const char* kFull = "zeromerge_decode/decode/batch=1,q_heads=4,kv_heads=2,head_dim=32,kv_len=400,budget=48,tail=6,dense=3,steps=40/f32/s7";
const char* kFilling = "zeromerge_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=16,kv_len=40,budget=64,tail=2,steps=64/f32/s3";

}  // namespace

TEST_CASE("zeromerge's start: [dense | top | tail], every prompt token in one slot, the dense weights the groups' sizes", "[unit]") {
  const Case c = parse_case_id(kFull);
  const ZeromergeParams s = zeromerge_params(c);
  const TensorMap in = c.method->inputs(c);
  const HostTensor& w = in.at("w_cache");
  // 400 tokens: tail 6 and top 48 − 6 − 3 = 39 kept whole, the other 355 in 3 groups: 119, 118, 118.
  for (int64_t r = 0; r < s.batch * s.kv_heads; ++r) {
    double total = 0;
    for (int64_t i = 0; i < s.budget; ++i) total += w.get(r * s.budget + i);
    CHECK(total == 400.0);
    CHECK(w.get(r * s.budget + 0) == 119.0);
    CHECK(w.get(r * s.budget + 1) == 118.0);
    CHECK(w.get(r * s.budget + 2) == 118.0);
    CHECK(w.get(r * s.budget + 3) == 1.0);
  }
  // A prompt shorter than the budget: every token in order, weight 1, the rest of the slots NaN.
  const Case f = parse_case_id(kFilling);
  const TensorMap fin = f.method->inputs(f);
  CHECK(fin.at("w_cache").get(39) == 1.0);
  CHECK(std::isnan(fin.at("w_cache").get(40)));
}

TEST_CASE("zeromerge's ring: appends until full, then cycles over the last tail − 1 slots", "[unit]") {
  const ZeromergeParams s = zeromerge_params(parse_case_id(kFilling));  // 40 tokens, budget 64, tail 2
  CHECK(zm_fill(s, 0) == 40);
  CHECK(zm_fill(s, 23) == 63);
  CHECK(zm_fill(s, 24) == 64);
  CHECK(zm_mergeable_end(s) == 63);
  CHECK(zm_ring_slot(s, 24) == 63);
  CHECK(zm_ring_slot(s, 25) == 63);  // tail 2: a ring of one slot
  const ZeromergeParams full = zeromerge_params(parse_case_id(kFull));  // full from the start, tail 6
  CHECK(zm_mergeable_end(full) == 43);
  for (int32_t t = 0; t < 12; ++t) CHECK(zm_ring_slot(full, t) == 43 + t % 5);
}

TEST_CASE("zeromerge's check passes the reference's own steps and fails wrong merges, weights and a missing compensation", "[unit]") {
  for (const char* id : {kFull, kFilling}) {
    INFO(id);
    const Case c = parse_case_id(id);
    const ZeromergeParams s = zeromerge_params(c);
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    const TensorMap good = test::reference_as_outputs(c, ref);
    REQUIRE(c.method->check(c, in, ref, good).pass());
    const int64_t last = s.steps - 1;  // a merging step in both cases
    REQUIRE(good.at("merged_from").get(last) >= s.dense);
    {  // the most-scored mergeable slot instead of the least
      TensorMap got = test::reference_as_outputs(c, ref);
      int64_t worst = s.dense;
      const double from = got.at("merged_from").get(last);
      for (int64_t i = s.dense; i < zm_mergeable_end(s); ++i)
        if (i != from && got.at("s_final").get(i) > got.at("s_final").get(worst)) worst = i;
      got.at("merged_from").set(last, static_cast<double>(worst));
      CHECK_FALSE(c.method->check(c, in, ref, got).pass());
    }
    {  // a token merged into a dense slot out of range, then an appending step that merged
      TensorMap got = test::reference_as_outputs(c, ref);
      got.at("merged_into").set(last, static_cast<double>(s.dense));
      CHECK_FALSE(c.method->check(c, in, ref, got).pass());
      if (s.filled < s.budget) {
        TensorMap early = test::reference_as_outputs(c, ref);
        early.at("merged_from").set(0, 1.0);
        CHECK_FALSE(c.method->check(c, in, ref, early).pass());
      }
    }
    {  // a weight off by one
      TensorMap got = test::reference_as_outputs(c, ref);
      got.at("w_final").set(0, got.at("w_final").get(0) + 1.0);
      CHECK_FALSE(c.method->check(c, in, ref, got).pass());
    }
  }
  // Attention without λ·log w: the outputs of λ = 0 checked as λ = 1's.
  const Case c = parse_case_id(kFull);
  const Case plain = parse_case_id(std::string(kFull).replace(std::string(kFull).find("steps=40"), 8, "steps=40,lambda=0"));
  const TensorMap in = c.method->inputs(c);
  const TensorMap uncompensated = test::reference_as_outputs(plain, plain.method->reference(plain, in));
  CHECK_FALSE(c.method->check(c, in, c.method->reference(c, in), uncompensated).pass());
}

TEST_CASE("zeromerge's prefill: the evicted tokens in contiguous groups, the dense slots their means and sizes", "[unit]") {
  // 130 tokens, budget 128 with 8 dense slots: 120 kept (16 of them the tail), 10 merged: 2, 2, 1 × 6.
  const Case c = parse_case_id("zeromerge/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=130,budget=128,dense=8,tail=16/f32/s4");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  const HostTensor &w = ref.tensors.at("w_merged"), &idx = ref.tensors.at("kept_idx"), &len = ref.tensors.at("kept_len");
  CHECK(len.get(0) == 120.0);
  CHECK(idx.get(119) == 129.0);
  const std::vector<double> sizes = {2, 2, 1, 1, 1, 1, 1, 1};
  for (int64_t m = 0; m < 8; ++m) CHECK(w.get(m) == sizes[m]);
  // The first slot: the mean of the first two evicted tokens.
  std::vector<int64_t> evicted;
  for (int64_t j = 0, i = 0; j < 130; ++j)
    if (i < 120 && idx.get(i) == static_cast<double>(j)) ++i;
    else evicted.push_back(j);
  REQUIRE(evicted.size() == 10);
  const double want = (in.at("k").get(evicted[0] * 64) + in.at("k").get(evicted[1] * 64)) / 2;
  CHECK(ref.tensors.at("k_merged").get(0) == Approx(want).epsilon(1e-12));
  // Within the budget: everything kept, every slot empty.
  const Case fits = parse_case_id("zeromerge/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=100,budget=128/bf16/s3");
  const TensorMap fin = fits.method->inputs(fits);
  const Reference fref = fits.method->reference(fits, fin);
  CHECK(fref.tensors.at("kept_len").get(0) == 100.0);
  CHECK(fref.tensors.at("w_merged").get(0) == 0.0);
}

TEST_CASE("zeromerge's check fails merged slots of another grouping and a miscounted weight", "[unit]") {
  const Case c = parse_case_id("zeromerge/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128,dense=4/bf16/s1");
  const TensorMap in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  REQUIRE(c.method->check(c, in, ref, test::reference_as_outputs(c, ref)).pass());
  {  // slots 0 and 1 swapped: each the mean of the other's group
    TensorMap got = test::reference_as_outputs(c, ref);
    HostTensor& k = got.at("k_merged");
    for (int64_t x = 0; x < 128; ++x) {
      const double a = k.get(x);
      k.set(x, k.get(128 + x));
      k.set(128 + x, a);
    }
    CHECK_FALSE(c.method->check(c, in, ref, got).pass());
  }
  {
    TensorMap got = test::reference_as_outputs(c, ref);
    got.at("w_merged").set(1, got.at("w_merged").get(1) + 1);
    CHECK_FALSE(c.method->check(c, in, ref, got).pass());
  }
}

TEST_CASE("zeromerge and zeromerge_decode pass on the CPU's best ISA and on the AVX2 baseline", "[cpu]") {
  CHECK(test::cpu_rows_not_passing(test::kZeromergeCases).empty());
  CHECK(test::cpu_rows_not_passing(test::kZeromergeDecodeCases).empty());
}
