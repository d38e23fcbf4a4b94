// The fp64 attention reference against hand-computed cases: causal alignment, rows with no
// visible key, kv_len = 0, GQA head mapping, ragged batches and the NaN padding.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "attnbench/cases.h"
#include "attnbench/method.h"
#include "reference/attention/attention_common.h"

using namespace attnbench;

namespace {

Case attention_case(const std::string& id) { return parse_case_id(id); }

// Inputs with chosen values: q [1,H,n,d], k/v [1,Hkv,cap,d].
TensorMap inputs(const Case& c, const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                 int kv_len) {
  const auto s = attention::attention_params(c);
  TensorMap in;
  in.emplace("q", HostTensor("q", c.dtype, {s.batch, s.q_heads, s.q_len, s.head_dim}));
  in.emplace("k", HostTensor("k", c.dtype, {s.batch, s.kv_heads, s.kv_cap, s.head_dim}));
  in.emplace("v", HostTensor("v", c.dtype, {s.batch, s.kv_heads, s.kv_cap, s.head_dim}));
  in.emplace("kv_len", HostTensor("kv_len", DType::i32, {s.batch}));
  for (size_t i = 0; i < q.size(); ++i) in.at("q").set(i, q[i]);
  for (size_t i = 0; i < k.size(); ++i) in.at("k").set(i, k[i]);
  for (size_t i = 0; i < v.size(); ++i) in.at("v").set(i, v[i]);
  in.at("kv_len").set(0, kv_len);
  return in;
}

}  // namespace

TEST_CASE("causal prefill is bottom-right aligned", "[unit]") {
  const Case c = attention_case("mha/prefill/batch=1,q_heads=1,head_dim=2,q_len=2,kv_len=2,causal=true/f32/s1");
  const auto in = inputs(c, {1, 0, 0, 1}, {1, 0, 0, 1}, {1, 2, 3, 4}, 2);
  const Reference ref = c.method->reference(c, in);
  const HostTensor& o = ref.tensors.at("O");
  const HostTensor& lse = ref.tensors.at("LSE");
  const double s = 1 / std::sqrt(2.0);
  // Query 0 sees key 0 only.
  CHECK(o.get(0) == 1.0);
  CHECK(o.get(1) == 2.0);
  CHECK(lse.get(0) == Approx(s).epsilon(1e-15));
  // Query 1 sees keys 0 and 1 with scores 0 and s.
  const double w = std::exp(s) / (1 + std::exp(s));
  CHECK(o.get(2) == Approx(1 * (1 - w) + 3 * w).epsilon(1e-14));
  CHECK(o.get(3) == Approx(2 * (1 - w) + 4 * w).epsilon(1e-14));
  CHECK(lse.get(1) == Approx(std::log(1 + std::exp(s))).epsilon(1e-14));
}

TEST_CASE("rows with no visible key give O = 0 and LSE = -inf", "[unit]") {
  const Case c = attention_case("mha/prefill/batch=1,q_heads=1,head_dim=2,q_len=3,kv_len=1,causal=true/f32/s1");
  const auto in = inputs(c, {1, 1, 1, 1, 1, 1}, {2, 0}, {5, 7}, 1);
  const Reference ref = c.method->reference(c, in);
  const HostTensor& o = ref.tensors.at("O");
  const HostTensor& lse = ref.tensors.at("LSE");
  for (int i : {0, 1}) {
    CHECK(lse.get(i) == -INFINITY);
    CHECK(o.get(2 * i) == 0.0);
    CHECK(o.get(2 * i + 1) == 0.0);
  }
  CHECK(o.get(4) == 5.0);
  CHECK(o.get(5) == 7.0);
  CHECK(lse.get(2) == Approx(2 / std::sqrt(2.0)).epsilon(1e-15));
}

TEST_CASE("kv_len = 0: every row is empty", "[unit]") {
  const Case c = attention_case("gqa/decode/batch=1,q_heads=2,kv_heads=1,head_dim=4,kv_len=0/bf16/s3");
  const auto in = c.method->inputs(c);
  const Reference ref = c.method->reference(c, in);
  for (int i = 0; i < 2; ++i) CHECK(ref.tensors.at("LSE").get(i) == -INFINITY);
  for (int i = 0; i < 8; ++i) CHECK(ref.tensors.at("O").get(i) == 0.0);
  CHECK(ref.baseline_err.at("O") == 0.0);
}

TEST_CASE("GQA maps query head h to KV head floor(h / group)", "[unit]") {
  // Four query heads over two KV heads; one key each, so O is that KV head's value.
  const Case c = attention_case("gqa/decode/batch=1,q_heads=4,kv_heads=2,head_dim=1,kv_len=1/f32/s1");
  const auto in = inputs(c, {1, 1, 1, 1}, {0, 0}, {10, 20}, 1);
  const Reference ref = c.method->reference(c, in);
  CHECK(ref.tensors.at("O").get(0) == 10.0);
  CHECK(ref.tensors.at("O").get(1) == 10.0);
  CHECK(ref.tensors.at("O").get(2) == 20.0);
  CHECK(ref.tensors.at("O").get(3) == 20.0);
  CHECK(ref.tensors.at("LSE").get(0) == 0.0);
}

TEST_CASE("non-causal attention sees every key", "[unit]") {
  const Case c = attention_case("mha/prefill/batch=1,q_heads=1,head_dim=1,q_len=1,kv_len=2,causal=false/f32/s1");
  const auto in = inputs(c, {0}, {1, 1}, {2, 4}, 2);
  const Reference ref = c.method->reference(c, in);
  CHECK(ref.tensors.at("O").get(0) == 3.0);
  CHECK(ref.tensors.at("LSE").get(0) == Approx(std::log(2.0)).epsilon(1e-15));
}

TEST_CASE("generated inputs: NaN beyond each ragged length, sequence 0 full", "[unit]") {
  const Case c = attention_case("gqa/decode/batch=5,q_heads=4,kv_heads=2,head_dim=8,kv_len=50,ragged=true/f16/s9");
  const auto in = c.method->inputs(c);
  const HostTensor& len = in.at("kv_len");
  const HostTensor& k = in.at("k");
  CHECK(len.get(0) == 50);
  bool some_shorter = false;
  for (int b = 0; b < 5; ++b) {
    const int n = static_cast<int>(len.get(b));
    REQUIRE(n >= 0);
    REQUIRE(n <= 50);
    some_shorter |= n < 50;
    for (int h = 0; h < 2; ++h)
      for (int j = 0; j < 50; ++j) CHECK(std::isnan(k.get(((b * 2 + h) * 50 + j) * 8)) == (j >= n));
  }
  CHECK(some_shorter);
}

TEST_CASE("per-head lengths: kv_len [batch, kv_heads], NaN beyond each, every head its own softmax", "[unit]") {
  CHECK_THROWS_WITH(attention_case("gqa/decode/batch=2,q_heads=4,kv_heads=2,head_dim=8,kv_len=50,ragged=true,head_lengths=true/f16/s9"),
                    Catch::Contains("head_lengths"));
  const Case c = attention_case("gqa/decode/batch=3,q_heads=4,kv_heads=2,head_dim=8,kv_len=50,head_lengths=true/f32/s9");
  auto in = c.method->inputs(c);
  const HostTensor &len = in.at("kv_len"), &k = in.at("k");
  REQUIRE(len.shape() == Shape{3, 2});
  CHECK(len.get(0) == 50);
  std::set<int> lengths;
  for (int bg = 0; bg < 6; ++bg) {
    const int n = static_cast<int>(len.get(bg));
    lengths.insert(n);
    for (int j = 0; j < 50; ++j) CHECK(std::isnan(k.get((bg * 50 + j) * 8)) == (j >= n));
  }
  CHECK(lengths.size() > 3);  // the two heads of a sequence differ too
  // Each query head attends over its own KV head's length: an all-ones value row of that head's
  // keys gives O = 1, and LSE over n keys of a zero query is log n.
  in.at("q").fill(0.0);
  for (int64_t i = 0; i < in.at("v").numel(); ++i)
    if (!std::isnan(in.at("v").get(i))) in.at("v").set(i, 1.0);
  const Reference ref = c.method->reference(c, in);
  for (int b = 0; b < 3; ++b)
    for (int h = 0; h < 4; ++h) {
      const int n = static_cast<int>(len.get(b * 2 + h / 2));
      CHECK(ref.tensors.at("LSE").get(b * 4 + h) == (n ? Approx(std::log(n)) : Approx(-INFINITY)));
      CHECK(ref.tensors.at("O").get((b * 4 + h) * 8) == (n ? 1.0 : 0.0));
    }
}

TEST_CASE("the same-precision baseline error is positive and small", "[unit]") {
  const Case c = attention_case("gqa/prefill/batch=1,q_heads=4,kv_heads=2,head_dim=64,q_len=64,kv_len=64/bf16/s1");
  const Reference ref = c.method->reference(c, c.method->inputs(c));
  CHECK(ref.baseline_err.at("O") > 0);
  CHECK(ref.baseline_err.at("O") < 0.05);
  CHECK(ref.baseline_err.at("LSE") < 1e-4);
}

TEST_CASE("model-sized cases check a seeded sample of rows", "[unit]") {
  const Case c = attention_case("gqa/prefill/batch=1,q_heads=32,kv_heads=8,head_dim=128,q_len=1024,kv_len=1024/bf16/s1");
  const auto w = c.method->work(c);
  CHECK(w.flops > 4e9);
  // Only the schema and the sampling are exercised here (the reference itself runs in the cpu check).
  CHECK(attention::attention_params(c).group == 4);
}
