// Storage types and their exact, round-to-nearest-even conversions.
//
// f16 and bf16 are stored as raw 16-bit patterns. Every conversion *to* a narrower type rounds
// to nearest, ties to even, directly from the source value (f64 -> f16 is one rounding, not
// two), so inputs generated in fp64 have the same bits on every machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnbench {

enum class DType : uint8_t { f64, f32, f16, bf16, i32, i8, u8 };

std::string_view dtype_name(DType t);         // "f64", "bf16", ...
DType parse_dtype(std::string_view name);      // throws InputError naming the accepted ones
size_t dtype_size(DType t);
bool dtype_is_float(DType t);
// Unit roundoff u = 2^-p of a float type (f64 2^-53, f32 2^-24, f16 2^-11, bf16 2^-8).
double dtype_unit_roundoff(DType t);

// --- conversions -----------------------------------------------------------------------------
uint16_t f32_to_f16(float x);
uint16_t f64_to_f16(double x);
float f16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float x);
uint16_t f64_to_bf16(double x);
float bf16_to_f32(uint16_t b);
float f64_to_f32(double x);   // a plain cast: IEEE casts round to nearest even

// Rounds x to the nearest value representable in t (for floats) and returns it as a double.
double round_to(DType t, double x);

}  // namespace attnbench
