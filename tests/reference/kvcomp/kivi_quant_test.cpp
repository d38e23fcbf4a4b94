// kivi's reference (reference/kvcomp/kivi.cpp): the codes of one group by hand in both roundings at
// exact halves, the flat group's guard (equal values, and an f16 scale that underflows), the split
// between codes and windows at lengths around R, a ragged batch whose cache is kivi_decode's
// inputs bit for bit, the quality's bytes by hand and its quantization error, the companions, and
// the check: one flipped code fails naming k_codes, a pad that is not NaN fails the layout.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnbench/check.h"
#include "attnbench/execute.h"
#include "attnbench/inputs.h"
#include "reference/kvcomp/kivi_quant.h"
#include "support.h"

using namespace attnbench;
using namespace attnbench::kvcomp;

namespace {

// k, v [batch, kv_heads, kv_cap, head_dim] from value(b·H + h, t, x), NaN past each length.
template <typename F>
TensorMap hand_inputs(const Case& c, const std::vector<int64_t>& len, const F& value) {
  const KiviParams s = kivi_params(c);
  const int64_t B = s.batch, H = s.kv_heads, T = s.kv_cap, D = s.head_dim;
  HostTensor k("k", c.dtype, {B, H, T, D}), v("v", c.dtype, {B, H, T, D}), kv_len("kv_len", DType::i32, {B});
  for (int64_t b = 0; b < B; ++b) {
    kv_len.set(b, static_cast<double>(len[b]));
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t x = 0; x < D; ++x) {
          const int64_t at = ((b * H + h) * T + t) * D + x;
          const auto [kx, vx] = t < len[b] ? value(b * H + h, t, x)
                                           : std::pair{std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
          k.set(at, kx);
          v.set(at, vx);
        }
  }
  TensorMap in;
  in.emplace("k", std::move(k));
  in.emplace("v", std::move(v));
  in.emplace("kv_len", std::move(kv_len));
  return in;
}

// The group pattern of the by-hand test: 0, 3, 1.5, 0.5, 2.5, then 1s (2 bits: scale 1, min 0).
double pattern(int64_t i) {
  static const double head[] = {0.0, 3.0, 1.5, 0.5, 2.5};
  return i < 5 ? head[i] : 1.0;
}

uint32_t word(const HostTensor& t, int64_t i) { return static_cast<uint32_t>(static_cast<int32_t>(t.get(i))); }

}  // namespace

TEST_CASE("kivi: one group's codes by hand, both roundings at exact halves, and the flat guard", "[unit]") {
  // 18 tokens, R = G = 16: keys 0..15 quantized (one group per channel), values 0 alone.
  for (const char* rounding : {"half_even", "half_away"}) {
    for (const char* dtype : {"f16", "bf16"}) {
      const std::string id = std::string("kivi/prefill/batch=1,q_heads=1,kv_heads=1,head_dim=16,kv_len=18,group_size=16,residual=16,rounding=") +
                             rounding + "/" + dtype + "/s1";
      INFO(id);
      const Case c = test::case_from_id(id);
      const TensorMap in = hand_inputs(c, {18}, [](int64_t, int64_t t, int64_t x) {
        double k = x * 0.5;                                  // flat channels
        if (x == 0) k = t < 16 ? pattern(t) : 7.0;           // the pattern, then the window
        if (x == 1) k = 0.25;                                // flat: scale 1, min 0.25
        if (x == 2) k = t % 2 ? std::ldexp(1.0, -24) : 0.0;  // f16: (2^-24)/3 rounds to 0
        return std::pair{k, t == 0 ? pattern(x) : 1.0};
      });
      const Reference ref = c.method->reference(c, in);
      const TensorMap& r = ref.tensors;
      const bool away = std::string(rounding) == "half_away", f16 = std::string(dtype) == "f16";
      // Codes 0, 3, 2, 0|1, 2|3, then 1s: 1.5 → 2 either way, 0.5 → 0 or 1, 2.5 → 2 or 3.
      const uint32_t expect = away ? 0x5555576Cu : 0x5555562Cu;
      CHECK(word(r.at("k_codes"), 0) == expect);
      CHECK(r.at("k_scale").get(0) == 1.0);
      CHECK(r.at("k_min").get(0) == 0.0);
      CHECK(word(r.at("k_codes"), 1) == 0u);
      CHECK(r.at("k_scale").get(1) == 1.0);
      CHECK(r.at("k_min").get(1) == 0.25);
      if (f16) {  // the scale underflows: the guard
        CHECK(word(r.at("k_codes"), 2) == 0u);
        CHECK(r.at("k_scale").get(2) == 1.0);
      } else {  // bf16 holds (2^-24)/3 ≈ 0.334·2^-24: codes 0 and 3 alternate
        CHECK(word(r.at("k_codes"), 2) == 0xCCCCCCCCu);
        CHECK(r.at("k_scale").get(2) == std::ldexp(171.0 / 512.0, -24));
      }
      for (int64_t x = 3; x < 16; ++x) {
        CHECK(word(r.at("k_codes"), x) == 0u);
        CHECK(r.at("k_min").get(x) == x * 0.5);
      }
      CHECK(word(r.at("v_codes"), 0) == expect);
      CHECK(r.at("v_scale").get(0) == 1.0);
      CHECK(r.at("v_min").get(0) == 0.0);
      CHECK(r.at("k_full").get(0) == 7.0);  // token 16, channel 0
      CHECK(r.at("v_full").get(0) == 1.0);  // token 1
      CHECK(r.at("k_full_len").get(0) == 2);
      CHECK(r.at("v_quant_len").get(0) == 1);
      CHECK(r.at("v_full_len").get(0) == 17);
      CHECK(r.at("k_quant_groups").get(0) == 1);
    }
  }
}

TEST_CASE("kivi: the split at lengths around R, padding past each", "[unit]") {
  // R = G = 16, lengths 10 (< R), 16 (= R), 17 (R + 1) and 33 (2R + 1).
  const Case c = test::case_from_id("kivi/prefill/batch=4,q_heads=4,kv_heads=1,head_dim=16,kv_len=33,group_size=16,residual=16/bf16/s1");
  const std::vector<int64_t> len = {10, 16, 17, 33};
  const TensorMap in = hand_inputs(c, len, [](int64_t b, int64_t t, int64_t x) {
    return std::pair{static_cast<double>(b * 64 + t) + x / 32.0, -static_cast<double>(b * 64 + t) - x / 32.0};
  });
  const Reference ref = c.method->reference(c, in);
  const TensorMap& r = ref.tensors;
  const KiviParams s = kivi_params(c);
  REQUIRE(s.k_quant_cap == 32);
  REQUIRE(s.v_quant_cap == 16);
  const std::vector<int64_t> k_full = {10, 16, 1, 1}, k_groups = {0, 0, 1, 2}, v_full = {10, 16, 17, 17}, v_quant = {0, 0, 0, 16};
  for (int64_t b = 0; b < 4; ++b) {
    INFO("sequence " << b << ", length " << len[b]);
    CHECK(r.at("k_full_len").get(b) == k_full[b]);
    CHECK(r.at("v_full_len").get(b) == v_full[b]);
    CHECK(r.at("v_quant_len").get(b) == v_quant[b]);
    for (int64_t x = 0; x < 16; ++x) CHECK(r.at("k_quant_groups").get(b * 16 + x) == k_groups[b]);
    const int64_t kq = len[b] - k_full[b], vq = len[b] - v_full[b];
    for (int64_t row = 0; row < 16; ++row) {  // k_full: token kq + row, then NaN
      const double got = r.at("k_full").get((b * 16 + row) * 16 + 3);
      if (row < k_full[b]) CHECK(got == in.at("k").get((b * 33 + kq + row) * 16 + 3));
      else CHECK(std::isnan(got));
    }
    for (int64_t row = 0; row < 17; ++row) {  // v_full: token vq + row, then NaN
      const double got = r.at("v_full").get((b * 17 + row) * 16 + 5);
      if (row < v_full[b]) CHECK(got == in.at("v").get((b * 33 + vq + row) * 16 + 5));
      else CHECK(std::isnan(got));
    }
    for (int64_t g = 0; g < 2; ++g) {  // key groups past the quantized keys: codes 0, NaN
      const bool quantized = g < k_groups[b];
      CHECK(std::isnan(r.at("k_scale").get(b * 16 * 2 + g)) != quantized);
      if (!quantized) CHECK(word(r.at("k_codes"), b * 16 * 2 + g) == 0u);
    }
    for (int64_t t = 0; t < 16; ++t) {
      CHECK(std::isnan(r.at("v_min").get(b * 16 + t)) != (t < v_quant[b]));
      if (t >= v_quant[b]) CHECK(word(r.at("v_codes"), b * 16 * 1 + t) == 0u);
    }
  }
}

TEST_CASE("kivi's cache is kivi_decode's inputs bit for bit, over a ragged batch", "[unit]") {
  const std::string params = "batch=5,q_heads=8,kv_heads=2,head_dim=64,kv_len=300,group_size=32,residual=64,bits=4,ragged=true";
  const Case quant = test::case_from_id("kivi/prefill/" + params + "/f16/s9");
  const Case decode = test::case_from_id("kivi_decode/decode/" + params + "/f16/s9");
  const TensorMap in = quant.method->inputs(quant);
  const Reference ref = quant.method->reference(quant, in);
  const TensorMap decode_in = decode.method->inputs(decode);
  CHECK(in.at("kv_len").hash() == decode_in.at("kv_len").hash());
  std::vector<double> lengths;
  for (int64_t b = 0; b < 5; ++b) lengths.push_back(in.at("kv_len").get(b));
  CHECK(lengths != std::vector<double>(5, 300.0));  // ragged indeed
  for (const char* name : {"k_codes", "k_scale", "k_min", "k_full", "v_codes", "v_scale", "v_min", "v_full"}) {
    INFO(name);
    CHECK(ref.tensors.at(name).hash() == decode_in.at(name).hash());
  }
}

TEST_CASE("kivi's quality: the stored bytes by hand, the quantization error of K and V", "[unit]") {
  // 50 tokens, G = R = 16, 2 bits, head_dim 32, bf16: keys 48 quantized + 2 full, values 33 + 17.
  // Per head: (48 + 33)·32·(2/8 + 2·2/16) + (2 + 17)·32·2 = 1296 + 1216 = 2512 bytes of 6400.
  const Case c = test::case_from_id("kivi/prefill/batch=1,q_heads=2,kv_heads=2,head_dim=32,kv_len=50,group_size=16,residual=16/bf16/s3");
  const CaseData data = prepare_case_data(c);
  const Json q = c.method->quality(c, data.inputs, test::reference_as_outputs(c, data.ref));
  CHECK(q["kv_bytes_kept"].get<double>() == 2 * 2512.0);
  CHECK(q["kv_bytes_full"].get<double>() == 2 * 6400.0);
  CHECK(q["compression_ratio"].get<double>() == Approx(6400.0 / 2512.0));
  // 2-bit codes of normal values: a few tenths of the norm (most tokens are quantized).
  CHECK(q["k_rel_l2"].get<double>() > 0.1);
  CHECK(q["k_rel_l2"].get<double>() < 0.5);
  CHECK(q["v_rel_l2"].get<double>() > 0.1);
  CHECK(q["v_rel_l2"].get<double>() < 0.5);
  // Work: k and v read, every output written; copy-bound.
  const Work w = c.method->work(c);
  CHECK(w.bound == Bound::copy);
  CHECK(w.bytes > 2 * 50 * 2 * 32 * 2.0);

  // A window longer than the sequence keeps everything: no error, nothing saved.
  const Case all = test::case_from_id("kivi/prefill/batch=2,q_heads=2,kv_heads=2,head_dim=32,kv_len=20,group_size=16,residual=32/bf16/s3");
  const CaseData all_data = prepare_case_data(all);
  const Json qa = all.method->quality(all, all_data.inputs, test::reference_as_outputs(all, all_data.ref));
  CHECK(qa["k_rel_l2"].get<double>() == 0.0);
  CHECK(qa["v_rel_l2"].get<double>() == 0.0);
  CHECK(qa["compression_ratio"].get<double>() == 1.0);
}

TEST_CASE("kivi: the prefill phase, the decode companions and the shared rules", "[unit]") {
  const Case c = test::case_from_id("kivi/prefill/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=4096/bf16/s1");
  const std::vector<RelatedCase> related = c.method->companions(c);
  REQUIRE(related.size() == 2);
  CHECK(related[0].role == "decode_quantized");
  CHECK(related[0].method == "kivi_decode");
  CHECK(related[0].phase == "decode");
  CHECK(related[0].params.at("bits") == c.params.at("bits"));
  CHECK(related[1].role == "decode_full");
  CHECK(related[1].method == "gqa");
  CHECK(related[1].params.at("kv_len") == Value(int64_t{4096}));
  CHECK_THROWS_WITH(test::case_from_id("kivi/decode/batch=1,q_heads=2,kv_heads=1,head_dim=64,kv_len=10/bf16/s1"),
                    Catch::Contains("prefill"));
  CHECK_THROWS_WITH(test::case_from_id("kivi/prefill/batch=1,q_heads=2,kv_heads=1,head_dim=64,kv_len=10,bits=3/bf16/s1"),
                    Catch::Contains("2- or 4-bit"));
}

TEST_CASE("kivi's check: a flipped code fails naming k_codes, a pad that is not NaN fails the layout", "[unit]") {
  const Case c = test::case_from_id("kivi/prefill/batch=3,q_heads=4,kv_heads=2,head_dim=64,kv_len=400,ragged=true/f16/s4");
  const CaseData data = prepare_case_data(c);
  const TensorMap good = test::reference_as_outputs(c, data.ref);
  CHECK(c.method->check(c, data.inputs, data.ref, good).pass());
  for (const OutputDecl& d : data.outputs) CHECK(check_layout(d, good).pass);

  TensorMap flipped = test::reference_as_outputs(c, data.ref);
  HostTensor& codes = flipped.at("k_codes");
  codes.set(5, static_cast<double>(static_cast<int32_t>(word(codes, 5) ^ 1u)));
  const CheckReport report = c.method->check(c, data.inputs, data.ref, flipped);
  CHECK_FALSE(report.pass());
  CHECK(report.first_failure().rfind("k_codes: 1 mismatches", 0) == 0);

  // A code word that is the poison pattern is a value of the layout (packed_bits), not unwritten:
  // the layout passes and the comparison names it.
  TensorMap poisoned = test::reference_as_outputs(c, data.ref);
  poisoned.at("v_codes").set(0, static_cast<double>(static_cast<int32_t>(kPoisonInt)));
  const auto decl = [&](const std::string& name) {
    for (const OutputDecl& d : data.outputs)
      if (d.name == name) return d;
    FAIL(name);
    return OutputDecl{};
  };
  CHECK(check_layout(decl("v_codes"), poisoned).pass);
  CHECK(c.method->check(c, data.inputs, data.ref, poisoned).first_failure().rfind("v_codes", 0) == 0);

  // Past a sequence's quantized keys the scales are NaN: a number there fails the layout.
  const KiviParams s = kivi_params(c);
  int64_t short_seq = -1;
  for (int64_t b = 0; b < s.batch && short_seq < 0; ++b)
    if (kivi_k_quant(s, static_cast<int64_t>(data.inputs.at("kv_len").get(b))) < s.k_quant_cap) short_seq = b;
  REQUIRE(short_seq >= 0);
  TensorMap padded = test::reference_as_outputs(c, data.ref);
  padded.at("k_scale").set((short_seq * s.kv_heads * s.head_dim + 1) * kivi_k_groups(s) - 1, 1.0);  // its last group
  const OutputCheck layout = check_layout(decl("k_scale"), padded);
  CHECK_FALSE(layout.pass);
  CHECK(layout.message.rfind("pad at", 0) == 0);
}
