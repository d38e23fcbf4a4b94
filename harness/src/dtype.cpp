#include "attnbench/dtype.h"

#include <cmath>
#include <cstring>

#include "attnbench/error.h"

namespace attnbench {

namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
  bool is_float;
};

constexpr DTypeInfo kInfos[] = {
    {DType::f64, "f64", 8, true},  {DType::f32, "f32", 4, true}, {DType::f16, "f16", 2, true},
    {DType::bf16, "bf16", 2, true}, {DType::i32, "i32", 4, false}, {DType::i8, "i8", 1, false},
    {DType::u8, "u8", 1, false},
};

const DTypeInfo& info(DType t) { return kInfos[static_cast<size_t>(t)]; }

// Rounds x to a binary format with p significant bits (the implicit one included) and exponent
// range [emin, emax], ties to even, in one step. Returns the rounded value (±inf on overflow).
// Every operation is exact in fp64 except nearbyint's rounding, which is the one we want.
double round_binary(double x, int p, int emin, int emax) {
  if (x == 0.0 || !std::isfinite(x)) return x;
  const double a = std::fabs(x);
  int e = std::ilogb(a);
  if (e > emax) return std::copysign(INFINITY, x);
  if (e < emin) e = emin;  // subnormal range: fixed spacing 2^(emin - p + 1)
  const double spacing = std::ldexp(1.0, e - (p - 1));
  const double r = std::nearbyint(a / spacing) * spacing;
  if (std::ilogb(r) > emax) return std::copysign(INFINITY, x);
  return std::copysign(r, x);
}

uint16_t encode_f16(double r) {  // r is already representable in f16 (or inf/nan)
  const uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  if (std::isnan(r)) return sign | 0x7E00;
  const double a = std::fabs(r);
  if (std::isinf(a)) return sign | 0x7C00;
  if (a == 0.0) return sign;
  const int e = std::ilogb(a);
  if (e < -14) return sign | static_cast<uint16_t>(a / 0x1p-24);  // subnormal: a multiple of 2^-24
  const auto mant = static_cast<uint16_t>(a / std::ldexp(1.0, e - 10)) - 1024;
  return sign | static_cast<uint16_t>((e + 15) << 10) | mant;
}

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
size_t dtype_size(DType t) { return info(t).size; }
bool dtype_is_float(DType t) { return info(t).is_float; }

DType parse_dtype(std::string_view name) {
  for (const auto& i : kInfos)
    if (i.name == name) return i.type;
  throw InputError(cat("unknown dtype \"", name, "\"; known: f64, f32, f16, bf16, i32, i8, u8"));
}

double dtype_unit_roundoff(DType t) {
  switch (t) {
    case DType::f64: return 0x1p-53;
    case DType::f32: return 0x1p-24;
    case DType::f16: return 0x1p-11;
    case DType::bf16: return 0x1p-8;
    default: return 0.0;
  }
}

uint16_t f64_to_f16(double x) {
  if (std::isnan(x)) return std::signbit(x) ? 0xFE00 : 0x7E00;
  return encode_f16(round_binary(x, 11, -14, 15));
}
uint16_t f32_to_f16(float x) { return f64_to_f16(static_cast<double>(x)); }

float f16_to_f32(uint16_t h) {
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const int exp = (h >> 10) & 0x1F;
  const int mant = h & 0x3FF;
  if (exp == 0x1F) return mant ? std::copysign(NAN, sign) : static_cast<float>(sign * INFINITY);
  if (exp == 0) return static_cast<float>(sign * mant * 0x1p-24);
  return static_cast<float>(sign * std::ldexp(1024.0 + mant, exp - 25));
}

uint16_t f64_to_bf16(double x) {
  if (std::isnan(x)) return std::signbit(x) ? 0xFFC0 : 0x7FC0;
  // The rounded value is exactly representable in f32, so the cast below is exact.
  const float r = static_cast<float>(round_binary(x, 8, -126, 127));
  uint32_t bits;
  std::memcpy(&bits, &r, 4);
  return static_cast<uint16_t>(bits >> 16);
}

uint16_t f32_to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7FFF + ((bits >> 16) & 1);  // round to nearest even on the dropped 16 bits
  return static_cast<uint16_t>(bits >> 16);
}

float bf16_to_f32(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float f64_to_f32(double x) { return static_cast<float>(x); }

double round_to(DType t, double x) {
  switch (t) {
    case DType::f64: return x;
    case DType::f32: return static_cast<float>(x);
    case DType::f16: return f16_to_f32(f64_to_f16(x));
    case DType::bf16: return bf16_to_f32(f64_to_bf16(x));
    case DType::i32: return static_cast<double>(static_cast<int32_t>(x));
    case DType::i8: return static_cast<double>(static_cast<int8_t>(x));
    case DType::u8: return static_cast<double>(static_cast<uint8_t>(x));
  }
  return x;
}

}  // namespace attnbench
