// The fp64 reference of the attention patterns (window, sinks, soft-cap, ALiBi) against
// hand-computed rows, the window's equality with plain causal attention, ALiBi's slopes and the
// work a window counts.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attnbench/cases.h"
#include "attnbench/method.h"
#include "reference/attention/attention_common.h"

using namespace attnbench;

namespace {

Case pattern_case(const std::string& id) { return parse_case_id(id); }

// One sequence, one head, head_dim 1: q = 1 and k_j = x_j give logits x_j (scale 1); v_j = j.
// The x_j are dyadic, so the f32 inputs hold them exactly.
TensorMap one_dim(const Case& c, const std::vector<double>& keys) {
  TensorMap in = c.method->inputs(c);
  const auto n = static_cast<int64_t>(keys.size());
  for (int64_t i = 0; i < in.at("q").numel(); ++i) in.at("q").set(i, 1.0);
  for (int64_t j = 0; j < n; ++j) {
    in.at("k").set(j, keys[j]);
    in.at("v").set(j, static_cast<double>(j));
  }
  return in;
}

// softmax-weighted mean of v_j = j over keys `seen` with logits l_j.
double mean_of(const std::vector<int>& seen, const std::vector<double>& logits) {
  double num = 0, den = 0;
  for (int j : seen) {
    num += std::exp(logits[j]) * j;
    den += std::exp(logits[j]);
  }
  return num / den;
}

}  // namespace

TEST_CASE("swa: a decode query sees its last `window` keys and the sinks below them", "[unit]") {
  const Case c = pattern_case("swa/decode/batch=1,q_heads=1,kv_heads=1,head_dim=1,kv_len=10,window=3,sinks=2/f32/s1");
  const std::vector<double> x = {0.5, -0.25, 0.375, 0.875, -1.0, 0.125, 0.4375, 0.75, -0.3125, 0.1875};
  const Reference ref = c.method->reference(c, one_dim(c, x));
  CHECK(ref.tensors.at("O").get(0) == Approx(mean_of({0, 1, 7, 8, 9}, x)).epsilon(1e-12));
}

TEST_CASE("swa: prefill rows are bottom-right aligned, and sinks inside the window count once", "[unit]") {
  // kv_len 6, q_len 3: rows at positions 3, 4, 5; window 2, sinks 4 (row 3's window [2, 4) already
  // holds sinks 2 and 3).
  const Case c = pattern_case("swa/prefill/batch=1,q_heads=1,kv_heads=1,head_dim=1,q_len=3,kv_len=6,window=2,sinks=4/f32/s1");
  const std::vector<double> x = {0.125, 0.25, -0.375, 0.8125, 0.3125, -0.625};
  const Reference ref = c.method->reference(c, one_dim(c, x));
  const HostTensor& o = ref.tensors.at("O");
  CHECK(o.get(0) == Approx(mean_of({0, 1, 2, 3}, x)).epsilon(1e-12));
  CHECK(o.get(1) == Approx(mean_of({0, 1, 2, 3, 4}, x)).epsilon(1e-12));
  CHECK(o.get(2) == Approx(mean_of({0, 1, 2, 3, 4, 5}, x)).epsilon(1e-12));
}

TEST_CASE("swa with window >= kv_len is gqa, to the bit, reference and baseline alike", "[unit]") {
  const Case swa = pattern_case("swa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=64,q_len=40,kv_len=90,window=90,ragged=true/bf16/s3");
  const Case gqa = pattern_case("gqa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=64,q_len=40,kv_len=90,ragged=true/bf16/s3");
  const TensorMap in = swa.method->inputs(swa);
  const Reference a = swa.method->reference(swa, in), b = gqa.method->reference(gqa, gqa.method->inputs(gqa));
  for (const char* name : {"O", "LSE"}) {
    const HostTensor &x = a.tensors.at(name), &y = b.tensors.at(name);
    REQUIRE(x.numel() == y.numel());
    int64_t differ = 0;
    for (int64_t i = 0; i < x.numel(); ++i) differ += !(x.get(i) == y.get(i) || (std::isinf(x.get(i)) && x.get(i) == y.get(i)));
    CHECK(differ == 0);
    CHECK(a.baseline_err.at(name) == b.baseline_err.at(name));
  }
}

TEST_CASE("softcap and alibi: the row's logits are capped, then biased by the head's slope", "[unit]") {
  // head_dim 1 gives scale 1. Two heads of an mha case: slopes 2^-4 and 2^-8 for H = 2.
  const Case c = pattern_case("mha/decode/batch=1,q_heads=2,head_dim=1,kv_len=5,softcap=0.5,alibi=true/f32/s1");
  TensorMap in = c.method->inputs(c);
  const std::vector<double> x = {0.875, -0.3125, 0.1875, 0.625, -0.75};
  for (int64_t h = 0; h < 2; ++h) in.at("q").set(h, 1.0);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t j = 0; j < 5; ++j) {
      in.at("k").set(h * 5 + j, x[j]);
      in.at("v").set(h * 5 + j, static_cast<double>(j));
    }
  CHECK(in.at("alibi_slopes").get(0) == std::exp2(-4.0));
  CHECK(in.at("alibi_slopes").get(1) == std::exp2(-8.0));
  const Reference ref = c.method->reference(c, in);
  for (int h = 0; h < 2; ++h) {
    const double m = h == 0 ? std::exp2(-4.0) : std::exp2(-8.0);
    std::vector<double> logits;
    for (int j = 0; j < 5; ++j) logits.push_back(0.5 * std::tanh(x[j] / 0.5) - m * (4 - j));
    CHECK(ref.tensors.at("O").get(h) == Approx(mean_of({0, 1, 2, 3, 4}, logits)).epsilon(1e-12));
  }
}

TEST_CASE("alibi slopes follow Press et al.'s get_slopes, the odd head counts included", "[unit]") {
  const Case c8 = pattern_case("mha/decode/batch=1,q_heads=8,head_dim=4,kv_len=3,alibi=true/f32/s1");
  const TensorMap in8 = c8.method->inputs(c8);
  for (int h = 0; h < 8; ++h) CHECK(in8.at("alibi_slopes").get(h) == std::exp2(-(h + 1.0)));
  // 12 heads: the 8 of a power of two, then every other slope of 16 heads (2^-0.5, 2^-1.5, ...).
  const Case c12 = pattern_case("mha/decode/batch=1,q_heads=12,head_dim=4,kv_len=3,alibi=true/f32/s1");
  const TensorMap in12 = c12.method->inputs(c12);
  for (int h = 0; h < 8; ++h) CHECK(in12.at("alibi_slopes").get(h) == std::exp2(-(h + 1.0)));
  for (int k = 0; k < 4; ++k)
    CHECK(in12.at("alibi_slopes").get(8 + k) == Approx(std::exp2(-0.5 - k)).epsilon(1e-7));  // stored in fp32
}

TEST_CASE("a window's work counts only the keys it sees: flat in kv_len", "[unit]") {
  const Case a = pattern_case("swa/decode/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=8192,window=4096,sinks=4/bf16/s1");
  const Case b = pattern_case("swa/decode/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=32768,window=4096,sinks=4/bf16/s1");
  const Work wa = a.method->work(a), wb = b.method->work(b);
  CHECK(wa.flops == wb.flops);
  CHECK(wa.bytes == wb.bytes);
  CHECK(wa.flops == 4.0 * 128 * 32 * (4096 + 4));
}

TEST_CASE("bad pattern parameters are refused with a reason", "[unit]") {
  CHECK_THROWS_WITH(pattern_case("swa/prefill/batch=1,q_heads=2,kv_heads=1,head_dim=8,q_len=4,kv_len=4,window=2,causal=false/f32/s1"),
                    Catch::Contains("window needs causal=true"));
  CHECK_THROWS(pattern_case("swa/decode/batch=1,q_heads=2,kv_heads=1,head_dim=8,kv_len=4,window=0/f32/s1"));
  CHECK_THROWS(pattern_case("gqa/decode/batch=1,q_heads=2,kv_heads=1,head_dim=8,kv_len=4,softcap=-1/f32/s1"));
}

TEST_CASE("softcap and alibi stay out of case ids while off: earlier cases keep their ids", "[unit]") {
  const Case plain = pattern_case("gqa/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=30/f32/s1");
  const Case off = pattern_case("gqa/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=30,softcap=0,alibi=false/f32/s1");
  CHECK(off.format_id() == plain.format_id());
  CHECK(plain.format_id() == "gqa/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,q_len=1,kv_len=30,causal=true,ragged=false,head_lengths=false/f32/s1");
  const Case on = pattern_case("gqa/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=30,softcap=30/f32/s1");
  CHECK(on.format_id() == "gqa/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,q_len=1,kv_len=30,causal=true,ragged=false,head_lengths=false,softcap=30/f32/s1");
  CHECK(pattern_case(on.format_id()).format_id() == on.format_id());
}

TEST_CASE("cog: signed weights sign(s)·exp(|s|)/Σ exp(|s|), sign(0) = 0", "[unit]") {
  const Case c = pattern_case("cog/decode/batch=1,q_heads=1,kv_heads=1,head_dim=1,kv_len=5/f32/s1");
  const std::vector<double> x = {0.875, -0.3125, 0.0, 0.625, -0.75};
  const Reference ref = c.method->reference(c, one_dim(c, x));
  double num = 0, den = 0;
  for (int j = 0; j < 5; ++j) {
    const double e = std::exp(std::fabs(x[j]));
    num += (x[j] > 0 ? 1.0 : x[j] < 0 ? -1.0 : 0.0) * e * j;
    den += e;
  }
  CHECK(ref.tensors.at("O").get(0) == Approx(num / den).epsilon(1e-12));
  CHECK(ref.tensors.at("LSE").get(0) == Approx(std::log(den)).epsilon(1e-12));
}
