// KIVI's quantizer and cache (reference/kvcomp/kivi_quant.h) and kivi_decode's reference: codes
// and scales by hand, the rounding modes, the flat-group guard, the split between quantized and
// full-precision tokens, dequantization within half a step, and the check refusing attention
// over the cache before quantization.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attnbench/cases.h"
#include "attnbench/execute.h"
#include "attnbench/inputs.h"
#include "reference/kvcomp/kivi_quant.h"
#include "support.h"

using namespace attnbench;
using namespace attnbench::kvcomp;

namespace {

KiviParams params(int bits, int group_size, int residual) {
  KiviParams s{};
  s.bits = bits;
  s.per_word = 32 / bits;
  s.group_size = group_size;
  s.residual = residual;
  return s;
}

}  // namespace

TEST_CASE("kivi's quantizer: min-max codes, both roundings, and the flat group's guard", "[unit]") {
  std::vector<uint32_t> codes(4);
  const std::vector<float> x = {0.0f, 1.5f, 3.0f, 0.5f};  // 2 bits: scale 1, min 0
  const QuantizedGroup even = quantize_group(x.data(), 4, 1, params(2, 16, 16), DType::f16, codes.data());
  CHECK(even.scale == 1.0f);
  CHECK(even.min == 0.0f);
  CHECK(codes == std::vector<uint32_t>{0, 2, 3, 0});  // 1.5 and 0.5 to even
  KiviParams away = params(2, 16, 16);
  away.half_away = 1;
  quantize_group(x.data(), 4, 1, away, DType::f16, codes.data());
  CHECK(codes == std::vector<uint32_t>{0, 2, 3, 1});  // away from zero
  const std::vector<float> flat = {0.25f, 0.25f, 0.25f, 0.25f};
  const QuantizedGroup g = quantize_group(flat.data(), 4, 1, params(4, 16, 16), DType::bf16, codes.data());
  CHECK(g.scale == 1.0f);
  CHECK(g.min == 0.25f);
  CHECK(codes == std::vector<uint32_t>{0, 0, 0, 0});
  const std::vector<float> strided = {-2.0f, 9.0f, 13.0f, 9.0f};  // every other value: −2 and 13, 4 bits: scale 1
  quantize_group(strided.data(), 2, 2, params(4, 16, 16), DType::f16, codes.data());
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 15);
}

TEST_CASE("kivi's split: keys quantized a window of R at a time, values all but the last R + 1", "[unit]") {
  const KiviParams s = params(2, 16, 32);
  const std::vector<std::pair<int64_t, int64_t>> keys = {{0, 0}, {1, 1}, {32, 32}, {33, 1}, {64, 32}, {100, 4}};
  for (const auto& [len, full] : keys) {
    CHECK(kivi_k_full(s, len) == full);
    CHECK(kivi_k_quant(s, len) % 32 == 0);
  }
  CHECK(kivi_v_full(s, 20) == 20);
  CHECK(kivi_v_full(s, 33) == 33);
  CHECK(kivi_v_full(s, 100) == 33);
  CHECK(kivi_v_quant(s, 100) == 67);
}

TEST_CASE("kivi_decode's cache: packed codes dequantize within half a step of the keys and values they stand for", "[unit]") {
  for (const char* id : {"kivi_decode/decode/batch=2,q_heads=4,kv_heads=2,head_dim=32,kv_len=200,residual=32,ragged=true/bf16/s3",
                         "kivi_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=64,kv_len=150,bits=4,group_size=16,residual=64/f16/s4"}) {
    INFO(id);
    const Case c = parse_case_id(id);
    const KiviParams s = kivi_params(c);
    const TensorMap in = c.method->inputs(c);
    const HostTensor k = normal_tensor("k", c.dtype, {s.batch, s.kv_heads, s.kv_cap, s.head_dim}, c.seed);
    const HostTensor v = normal_tensor("v", c.dtype, {s.batch, s.kv_heads, s.kv_cap, s.head_dim}, c.seed);
    const Dequantized d = dequantize_cache(s, in, in.at("kv_len"), DType::f64);
    int64_t far = 0, compared = 0;
    for (int64_t b = 0; b < s.batch; ++b) {
      const auto len = static_cast<int64_t>(in.at("kv_len").get(b));
      for (int64_t h = 0; h < s.kv_heads; ++h)
        for (int64_t t = 0; t < len; ++t)
          for (int64_t x = 0; x < s.head_dim; ++x) {
            const int64_t at = ((b * s.kv_heads + h) * s.kv_cap + t) * s.head_dim + x;
            const int64_t kg = ((b * s.kv_heads + h) * s.head_dim + x) * kivi_k_groups(s) + t / s.group_size;
            const int64_t vg = ((b * s.kv_heads + h) * s.v_quant_cap + t) * kivi_v_groups(s) + x / s.group_size;
            const double kstep = t < kivi_k_quant(s, len) ? in.at("k_scale").get(kg) : 0.0;
            const double vstep = t < kivi_v_quant(s, len) ? in.at("v_scale").get(vg) : 0.0;
            far += std::abs(d.k.get(at) - k.get(at)) > 0.5 * kstep * (1 + 1e-6);
            far += std::abs(d.v.get(at) - v.get(at)) > 0.5 * vstep * (1 + 1e-6);
            compared += 2;
          }
    }
    CHECK(compared > 0);
    CHECK(far == 0);
  }
}

TEST_CASE("kivi_decode's check refuses attention over the cache before quantization", "[unit]") {
  const Case c = parse_case_id("kivi_decode/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=600/bf16/s5");
  const CaseData data = prepare_case_data(c);
  CHECK(c.method->check(c, data.inputs, data.ref, test::reference_as_outputs(c, data.ref)).pass());
  const Case full = parse_case_id("gqa/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=600/bf16/s5");  // the same k, v, q
  const Reference unquantized = full.method->reference(full, full.method->inputs(full));
  CHECK_FALSE(c.method->check(c, data.inputs, data.ref, test::reference_as_outputs(c, unquantized)).pass());
}

TEST_CASE("kivi_decode's rules and figures: group shapes, stored bytes with scales and minima", "[unit]") {
  CHECK_THROWS_WITH(parse_case_id("kivi_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=64,kv_len=10,bits=3/bf16/s1"),
                    Catch::Contains("2- or 4-bit"));
  CHECK_THROWS_WITH(parse_case_id("kivi_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=80,kv_len=10,group_size=32/bf16/s1"),
                    Catch::Contains("does not divide head_dim"));
  CHECK_THROWS_WITH(parse_case_id("kivi_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=64,kv_len=10,residual=48/bf16/s1"),
                    Catch::Contains("multiple of group_size"));
  // 32k tokens, 2 bits, G 32, R 128: the asymptotic 16 / (2 + 32/32) = 5.3x, less the windows.
  const Case c = parse_case_id("kivi_decode/decode/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=32768/bf16/s1");
  const Json q = c.method->quality(c, {}, {});
  CHECK(q["compression_ratio"].get<double>() > 5.2);
  CHECK(q["compression_ratio"].get<double>() < 16.0 / 3.0);
  CHECK(c.method->work(c).bytes < 32768.0 * 2 * 8 * 128 * 2 / 5);
}
