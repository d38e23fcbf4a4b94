// Round-to-nearest-even conversions, exhaustively where the space is small.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "attnbench/dtype.h"

using namespace attnbench;

TEST_CASE("every f16 and bf16 bit pattern round-trips through f32 and f64", "[unit]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = f16_to_f32(bits);
    if (std::isnan(f)) continue;
    CHECK(f32_to_f16(f) == bits);
    CHECK(f64_to_f16(static_cast<double>(f)) == bits);
    const float b = bf16_to_f32(bits);
    if (std::isnan(b)) continue;
    CHECK(f32_to_bf16(b) == bits);
    CHECK(f64_to_bf16(static_cast<double>(b)) == bits);
  }
}

TEST_CASE("f16 rounds to nearest, ties to even, with subnormals and overflow", "[unit]") {
  CHECK(f64_to_f16(1.0) == 0x3C00);
  CHECK(f64_to_f16(1.0 + 0x1p-11) == 0x3C00);               // tie -> even
  CHECK(f64_to_f16(1.0 + 3 * 0x1p-11) == 0x3C02);           // tie -> even (up)
  CHECK(f64_to_f16(1.0 + 0x1p-11 + 0x1p-40) == 0x3C01);     // just above the tie
  CHECK(f64_to_f16(65504.0) == 0x7BFF);
  CHECK(f64_to_f16(65519.99) == 0x7BFF);
  CHECK(f64_to_f16(65520.0) == 0x7C00);                     // rounds to infinity
  CHECK(f64_to_f16(0x1p-24) == 0x0001);                     // smallest subnormal
  CHECK(f64_to_f16(0x1p-25) == 0x0000);                     // tie -> even (zero)
  CHECK(f64_to_f16(0x1.8p-25) == 0x0001);
  CHECK(f64_to_f16(-2.0) == 0xC000);
  CHECK(std::isnan(f16_to_f32(f64_to_f16(std::numeric_limits<double>::quiet_NaN()))));
}

TEST_CASE("f64 to f16 rounds once, not twice through f32", "[unit]") {
  // 1 + 2^-11 + 2^-30 rounds up in one step; through f32 it would first become 1 + 2^-11 (a tie)
  // and then round to even (down).
  const double x = 1.0 + 0x1p-11 + 0x1p-30;
  CHECK(f64_to_f16(x) == 0x3C01);
  CHECK(f32_to_f16(static_cast<float>(x)) == 0x3C00);
}

TEST_CASE("bf16 rounds to nearest even", "[unit]") {
  CHECK(f64_to_bf16(1.0) == 0x3F80);
  CHECK(f64_to_bf16(1.0 + 0x1p-8) == 0x3F80);               // tie -> even
  CHECK(f64_to_bf16(1.0 + 3 * 0x1p-8) == 0x3F82);
  CHECK(f64_to_bf16(1.0 + 0x1p-8 + 0x1p-30) == 0x3F81);     // one rounding from f64
  CHECK(f32_to_bf16(3.0e38f) == 0x7F62);
  CHECK(f64_to_bf16(3.4e38) == 0x7F80);                     // overflow to infinity
}

TEST_CASE("dtype names parse and sizes are right", "[unit]") {
  for (auto t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32, DType::i8, DType::u8})
    CHECK(parse_dtype(dtype_name(t)) == t);
  CHECK(dtype_size(DType::bf16) == 2);
  CHECK(dtype_size(DType::i8) == 1);
  CHECK_THROWS(parse_dtype("fp8"));
  CHECK(round_to(DType::bf16, 1.0 + 0x1p-9) == 1.0);
}
