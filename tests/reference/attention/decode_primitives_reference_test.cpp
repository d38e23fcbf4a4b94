// The fp64 reference of the decode primitives the KV methods build on: gather_decode (listed keys)
// and bias_decode (a logit bias per key) — their inputs, their equality with gqa over the keys they
// stand for, a hand-computed biased row, the checks refusing wrong answers, and what work and
// quality count.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <vector>

#include "attnbench/cases.h"
#include "attnbench/execute.h"
#include "attnbench/method.h"
#include "reference/attention/attention_common.h"

using namespace attnbench;

namespace {

// The reference's outputs rounded to what an impl returns (O in the case's dtype, LSE f32).
TensorMap rounded(const Case& c, const Reference& ref) {
  TensorMap got;
  for (const OutputDecl& d : c.method->outputs(c)) {
    HostTensor t(d.name, d.dtype, ref.tensors.at(d.name).shape());
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, ref.tensors.at(d.name).get(i));
    got.emplace(d.name, std::move(t));
  }
  return got;
}

TensorMap copy_of(const TensorMap& in) {
  TensorMap out;
  for (const auto& [name, t] : in) out.emplace(name, t.clone());
  return out;
}

}  // namespace

TEST_CASE("gather_decode's lists: distinct, ascending, in the cache; every other key and the padding NaN", "[unit]") {
  const Case c = parse_case_id("gather_decode/decode/batch=2,q_heads=6,kv_heads=3,head_dim=4,kv_len=50,budget=9,index_scope=per_head,ragged=true/f32/s4");
  const TensorMap in = c.method->inputs(c);
  const HostTensor &idx = in.at("key_idx"), &len = in.at("idx_len"), &k = in.at("k");
  REQUIRE(idx.shape() == std::vector<int64_t>{2, 3, 9});
  REQUIRE(len.shape() == std::vector<int64_t>{2, 3});
  CHECK(len.get(0) == 9);  // list 0 full; the others a seeded count
  for (int64_t x = 0; x < 6; ++x) {
    const auto n = static_cast<int64_t>(len.get(x));
    REQUIRE(n <= 9);
    std::set<int64_t> listed;
    for (int64_t t = 0; t < n; ++t) {
      const auto key = static_cast<int64_t>(idx.get(x * 9 + t));
      CHECK((key >= 0 && key < 50));
      if (t > 0) CHECK(key > static_cast<int64_t>(idx.get(x * 9 + t - 1)));
      listed.insert(key);
    }
    for (int64_t j = 0; j < 50; ++j) CHECK(std::isnan(k.get((x * 50 + j) * 4)) == !listed.count(j));
    for (int64_t t = n; t < 9; ++t) CHECK(std::isnan(k.get((x * 50 + static_cast<int64_t>(idx.get(x * 9 + t))) * 4)));
  }
}

TEST_CASE("gather_decode is gqa over its listed keys, to the bit, shared and per-head lists alike", "[unit]") {
  for (const char* scope : {"shared", "per_head"}) {
    const Case g = parse_case_id(std::string("gather_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=16,kv_len=40,budget=7,index_scope=") +
                                 scope + "/f32/s2");
    const TensorMap in = g.method->inputs(g);
    // The listed rows compacted into a cache of 7 keys per (sequence, KV head).
    const Case d = parse_case_id("gqa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=16,kv_len=7,head_lengths=true/f32/s2");
    TensorMap din = d.method->inputs(d);
    const bool per_head = std::string(scope) == "per_head";
    for (int64_t bg = 0; bg < 4; ++bg) {
      din.at("kv_len").set(bg, 7.0);
      for (int64_t t = 0; t < 7; ++t) {
        const auto key = static_cast<int64_t>(in.at("key_idx").get((per_head ? bg : bg / 2) * 7 + t));
        for (const char* name : {"k", "v"})
          for (int64_t e = 0; e < 16; ++e) din.at(name).set((bg * 7 + t) * 16 + e, in.at(name).get((bg * 40 + key) * 16 + e));
      }
    }
    din.at("q") = in.at("q").clone();
    const Reference a = g.method->reference(g, in), b = d.method->reference(d, din);
    for (const char* name : {"O", "LSE"}) {
      const HostTensor &x = a.tensors.at(name), &y = b.tensors.at(name);
      int64_t differ = 0;
      for (int64_t i = 0; i < x.numel(); ++i) differ += x.get(i) != y.get(i);
      CHECK(differ == 0);
      CHECK(a.baseline_err.at(name) == b.baseline_err.at(name));
    }
  }
}

TEST_CASE("bias_decode adds each key's bias after the soft-cap", "[unit]") {
  // head_dim 1 (scale 1), one head: logit_j = 2·tanh(q·k_j / 2) + bias_j; v_j = j.
  const Case c = parse_case_id("bias_decode/decode/batch=1,q_heads=1,kv_heads=1,head_dim=1,kv_len=4,softcap=2/f32/s1");
  TensorMap in = c.method->inputs(c);
  const std::vector<double> k = {0.5, -1.25, 2.0, 0.75}, bias = {0.0, std::log(3.0f), std::log(64.0f), 0.0};
  in.at("q").set(0, 1.0);
  for (int64_t j = 0; j < 4; ++j) {
    in.at("k").set(j, k[j]);
    in.at("v").set(j, static_cast<double>(j));
    in.at("key_bias").set(j, bias[j]);
  }
  double num = 0, den = 0;
  for (int64_t j = 0; j < 4; ++j) {
    const double e = std::exp(2.0 * std::tanh(k[j] / 2.0) + static_cast<double>(static_cast<float>(bias[j])));
    num += e * static_cast<double>(j);
    den += e;
  }
  const Reference ref = c.method->reference(c, in);
  CHECK(ref.tensors.at("O").get(0) == Approx(num / den).epsilon(1e-12));
  CHECK(ref.tensors.at("LSE").get(0) == Approx(std::log(den)).epsilon(1e-12));
}

TEST_CASE("bias_decode's inputs: log-weights of merged slots, NaN past each length", "[unit]") {
  const Case c = parse_case_id("bias_decode/decode/batch=2,q_heads=4,kv_heads=2,head_dim=8,kv_len=400,ragged=true/bf16/s3");
  const TensorMap in = c.method->inputs(c);
  const HostTensor &bias = in.at("key_bias"), &len = in.at("kv_len");
  int64_t zeros = 0, seen = 0;
  for (int64_t bg = 0; bg < 4; ++bg)
    for (int64_t j = 0; j < 400; ++j) {
      const double x = bias.get(bg * 400 + j);
      if (j >= len.get(bg / 2)) {
        CHECK(std::isnan(x));
        continue;
      }
      ++seen;
      zeros += x == 0.0;
      CHECK((x >= 0.0 && x <= std::log(64.0) + 1e-6));
    }
  CHECK(std::abs(static_cast<double>(zeros) / static_cast<double>(seen) - 0.75) < 0.06);
}

TEST_CASE("the checks refuse a step over the wrong keys and a step without the bias", "[unit]") {
  SECTION("gather_decode: one listed key dropped") {
    const Case c = parse_case_id("gather_decode/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=300,budget=4/f32/s5");
    const CaseData data = prepare_case_data(c);
    CHECK(c.method->check(c, data.inputs, data.ref, rounded(c, data.ref)).pass());
    TensorMap short_lists = copy_of(data.inputs);
    short_lists.at("idx_len").set(0, 3.0);
    CHECK_FALSE(c.method->check(c, data.inputs, data.ref, rounded(c, c.method->reference(c, short_lists))).pass());
  }
  SECTION("bias_decode: the bias left out") {
    const Case c = parse_case_id("bias_decode/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=300/bf16/s6");
    const CaseData data = prepare_case_data(c);
    CHECK(c.method->check(c, data.inputs, data.ref, rounded(c, data.ref)).pass());
    TensorMap unbiased = copy_of(data.inputs);
    unbiased.at("key_bias").fill(0.0);
    CHECK_FALSE(c.method->check(c, data.inputs, data.ref, rounded(c, c.method->reference(c, unbiased))).pass());
  }
}

TEST_CASE("gather_decode counts the listed keys: work and bytes read scale with budget, the cache stays", "[unit]") {
  const Case a = parse_case_id("gather_decode/decode/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=32768,budget=2048/bf16/s1");
  const Case b = parse_case_id("gather_decode/decode/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=8192,budget=2048/bf16/s1");
  CHECK(a.method->work(a).bytes == b.method->work(b).bytes);
  CHECK(a.method->work(a).flops == 4.0 * 128 * 32 * 2048);
  const Json q = a.method->quality(a, {}, {});
  CHECK(q["kv_cache_bytes"].get<double>() == 32768.0 * 2 * 8 * 128 * 2);
  CHECK(q["kv_bytes_read_per_step"].get<double>() == 2048.0 * 2 * 8 * 128 * 2);
  const auto base = a.method->baseline(a);
  REQUIRE(base);
  CHECK(base->method == "gqa");
  CHECK(!base->params.count("budget"));
}

TEST_CASE("gather_decode refuses what a list cannot mean", "[unit]") {
  CHECK_THROWS_WITH(parse_case_id("gather_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=8,kv_len=4,budget=5/f32/s1"),
                    Catch::Contains("lists more keys than the cache"));
  CHECK_THROWS_WITH(parse_case_id("gather_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=8,q_len=2,kv_len=4,budget=2/f32/s1"),
                    Catch::Contains("one query per sequence"));
  CHECK_THROWS_WITH(parse_case_id("gather_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=8,kv_len=4,budget=2,alibi=true/f32/s1"),
                    Catch::Contains("alibi"));
  CHECK_THROWS(parse_case_id("gather_decode/prefill/batch=1,q_heads=2,kv_heads=1,head_dim=8,q_len=1,kv_len=4,budget=2/f32/s1"));
}
