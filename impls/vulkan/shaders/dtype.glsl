// Storage types of the attention shaders and their exact conversions (harness/include/attnbench/dtype.h).
// The codes match the host's (impls/vulkan/attention/attention_plan.h): 0 f32, 1 f16, 2 bf16.
// f16 and bf16 widen exactly; narrowing rounds to nearest, ties to even, in integer arithmetic,
// so the result does not depend on the device's float-to-half rounding mode.
#ifndef ATTNBENCH_DTYPE_GLSL
#define ATTNBENCH_DTYPE_GLSL

#define DT_F32 0u
#define DT_F16 1u
#define DT_BF16 2u

#define NEG_INF (uintBitsToFloat(0xff800000u))
#define LOG2E 1.4426950408889634

float bf16_bits_to_f32(uint b) { return uintBitsToFloat(b << 16); }
float f16_bits_to_f32(uint h) { return unpackHalf2x16(h).x; }

// Two 16-bit values of one 32-bit word, low half first.
vec2 unpack2(uint w, uint dtype) {
  if (dtype == DT_BF16) return vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u));
  return unpackHalf2x16(w);
}

uint f32_to_bf16_rne(float x) {
  const uint u = floatBitsToUint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return ((u >> 16) & 0x8000u) | 0x7fc0u;  // NaN stays NaN
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

uint f32_to_f16_rne(float x) {
  const uint u = floatBitsToUint(x);
  const uint sign = (u >> 16) & 0x8000u;
  const uint a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;         // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;        // rounds to infinity (65520 and up)
  if (a < 0x38800000u) {                               // below 2^-14: a subnormal half or zero
    const uint e = a >> 23;
    if (e < 102u) return sign;                         // below 2^-25: rounds to zero
    const uint m = (a & 0x7fffffu) | 0x800000u;
    const uint shift = 126u - e;                       // value = m·2^(e-150) = (m >> shift)·2^-24
    uint r = m >> shift;
    const uint rem = m & ((1u << shift) - 1u), half_ulp = 1u << (shift - 1u);
    if (rem > half_ulp || (rem == half_ulp && (r & 1u) != 0u)) r += 1u;
    return sign | r;
  }
  const uint r = a - 0x38000000u;                      // rebias the exponent from 127 to 15
  return sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13);
}

uint f32_to_storage16(float x, uint dtype) { return dtype == DT_BF16 ? f32_to_bf16_rne(x) : f32_to_f16_rne(x); }

#endif
