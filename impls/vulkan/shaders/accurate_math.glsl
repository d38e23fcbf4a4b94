// fp32 log and exp with an error of about one ulp on every Vulkan device.
//
// Why not GLSL's log and exp: their precision is implementation-defined. Vulkan only requires
// log to be within 3 ulp outside [0.5, 2] and within 2^-21 *absolute* inside it, so log(u) for
// u near 1 (−log u ≈ 6e-8) may have no correct bit, and exp within 3 + 2|x| ulp. The exponential
// race needs logs to 2 ulp (docs/methodology.md, c_race) and SnapKV's tie band assumes an exp to
// 2 ulp, so both are built here from +, −, × (correctly rounded in Vulkan, whether or not a
// driver fuses them) and one division whose 2.5-ulp error reaches the result damped by < 0.05.
// Every step is `precise` (SPIR-V NoContraction): without it a driver may reassociate, e.g.
// Mesa folds n·LN2_HI + n·LN2_LO back into n·ln2, which costs 60 ulp at x = −72.
// tests/vulkan/shaders/accurate_math_vulkan_test.cpp measures both against fp64 on the device.
#ifndef ATTNBENCH_ACCURATE_MATH_GLSL
#define ATTNBENCH_ACCURATE_MATH_GLSL

#define ACC_NEG_INF (uintBitsToFloat(0xff800000u))
#define ACC_POS_INF (uintBitsToFloat(0x7f800000u))

// ln 2 split so that n·LN2_HI is exact for |n| < 2^9 (LN2_HI has 15 significant bits).
const float LN2_HI = 0.693145751953125;
const float LN2_LO = 1.428606765330187e-06;

// Natural log. x = 2^k·m with m in [√½, √2], f = m − 1 (exact), s = f/(2 + f):
//   log m = log((1 + s)/(1 − s)) = 2s + s·R(s²),  R(z) = 2z/3 + 2z²/5 + 2z³/7 + 2z⁴/9 + …
// and since 2s = f − f·s, log m = f − (f²/2 − s·(f²/2 + R)): the leading f is exact and the rest
// is a correction below 0.05·|f|. |s| ≤ 0.1716, so the series' tail is below 2^-28 relative.
// log(0) = −inf, log(+inf) = +inf, log of a negative number or NaN is NaN.
float accurate_log(float x) {
  if (!(x > 0.0)) return x == 0.0 ? ACC_NEG_INF : uintBitsToFloat(0x7fc00000u);
  if (x == ACC_POS_INF) return x;
  int k = 0;
  if (x < 1.1754943508222875e-38) {  // subnormal (where the device keeps them): scale by 2^23
    x *= 8388608.0;
    k = -23;
  }
  const uint u = floatBitsToUint(x);
  k += int(u >> 23) - 127;
  float m = uintBitsToFloat((u & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  if (m > 1.4142135) {
    m *= 0.5;
    k += 1;
  }
  precise const float f = m - 1.0;
  precise const float s = f / (2.0 + f);
  precise const float z = s * s;
  precise const float r = z * (0.6666666865348816 + z * (0.4000000059604645 + z * (0.2857142984867096 + z * 0.2222222238779068)));
  precise const float hfsq = 0.5 * f * f;
  const float kf = float(k);
  precise const float result = kf * LN2_HI + (f - (hfsq - (s * (hfsq + r) + kf * LN2_LO)));
  return result;
}

// e^x. x = n·ln 2 + t with n = round(x/ln 2), t in [−0.35, 0.35] (exact: n·LN2_HI is exact and
// close to x), e^t by its Taylor polynomial to t^7 (the tail is below 2^-27 relative), scaled by
// 2^n in two steps so results down to the subnormals are formed without an undefined ldexp.
float accurate_exp(float x) {
  if (x != x) return x;
  if (x < -104.0) return 0.0;
  if (x > 88.8) return ACC_POS_INF;
  const float n = floor(x * 1.4426950216293335 + 0.5);
  precise const float t = (x - n * LN2_HI) - n * LN2_LO;
  precise const float p =
      1.0 + t * (1.0 + t * (0.5 + t * (0.1666666716337204 +
                                       t * (0.0416666679084301 + t * (0.008333333767950535 +
                                                                      t * (0.0013888889225199819 + t * 1.9841270113829523e-4))))));
  const int e = int(n);
  precise float y;
  if (e > 127) y = (p * 2.0) * 1.7014118346046923e38;  // 2^127
  else if (e >= -126) y = p * uintBitsToFloat(uint(e + 127) << 23);
  else y = (p * uintBitsToFloat(uint(e + 127 + 64) << 23)) * 5.421010862427522e-20;  // 2^-64
  return y;
}

#endif
