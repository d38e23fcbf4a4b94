#include "attnbench/detmath.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace attnbench::detmath {

namespace {
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // high bits of ln 2, exact product with small ints
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kHalfPi = 1.57079632679489661923;

// sin and cos of θ = g·π/2 for g in [0, 0.5] (θ ≤ π/4) by Taylor series to θ^17 / θ^18.
double sin_small(double t) {
  const double t2 = t * t;
  double s = 1.0 / 355687428096000.0;  // 1/17!
  s = s * t2 - 1.0 / 1307674368000.0;   // 1/15!
  s = s * t2 + 1.0 / 6227020800.0;      // 1/13!
  s = s * t2 - 1.0 / 39916800.0;        // 1/11!
  s = s * t2 + 1.0 / 362880.0;          // 1/9!
  s = s * t2 - 1.0 / 5040.0;
  s = s * t2 + 1.0 / 120.0;
  s = s * t2 - 1.0 / 6.0;
  return t + t * t2 * s;
}
double cos_small(double t) {
  const double t2 = t * t;
  double c = 1.0 / 6402373705728000.0;  // 1/18!
  c = c * t2 - 1.0 / 20922789888000.0;   // 1/16!
  c = c * t2 + 1.0 / 87178291200.0;      // 1/14!
  c = c * t2 - 1.0 / 479001600.0;        // 1/12!
  c = c * t2 + 1.0 / 3628800.0;          // 1/10!
  c = c * t2 - 1.0 / 40320.0;
  c = c * t2 + 1.0 / 720.0;
  c = c * t2 - 1.0 / 24.0;
  c = c * t2 + 0.5;
  return 1.0 - t2 * c;
}

// cos and sin of f·π/2, f in [0, 1): reflect so the series argument stays ≤ π/4.
double cos_quarter(double f) { return f <= 0.5 ? cos_small(f * kHalfPi) : sin_small((1.0 - f) * kHalfPi); }
double sin_quarter(double f) { return f <= 0.5 ? sin_small(f * kHalfPi) : cos_small((1.0 - f) * kHalfPi); }
}  // namespace

double log(double x) {
  // x = m·2^e with m in [√½, √2): exponent and mantissa by bit manipulation (exact).
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  int e = static_cast<int>((bits >> 52) & 0x7FF);
  if (e == 0) {  // subnormal: scale into the normal range first (exact)
    x *= 0x1p54;
    std::memcpy(&bits, &x, 8);
    e = static_cast<int>((bits >> 52) & 0x7FF) - 54;
  }
  e -= 1023;
  bits = (bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;  // m in [1, 2)
  double m;
  std::memcpy(&m, &bits, 8);
  if (m > 2.0 * kSqrtHalf) {
    m *= 0.5;
    e += 1;
  }
  // log m = 2·atanh(s), s = (m−1)/(m+1), |s| ≤ 0.1716: odd series to s^25.
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double p = 1.0 / 25.0;
  for (int k = 23; k >= 3; k -= 2) p = p * s2 + 1.0 / k;
  const double log_m = 2.0 * s + 2.0 * s * s2 * p;
  const double de = static_cast<double>(e);
  return de * kLn2Hi + (log_m + de * kLn2Lo);
}

double exp(double x) {
  if (x < -745.0) return 0.0;
  if (x > 709.0) return HUGE_VAL;
  // x = k·ln 2 + r with |r| ≤ ln2/2 (k·kLn2Hi is exact for |k| < 2^11); e^r by its Taylor series to
  // r^17 in nested form, 1 + r(1 + r/2(1 + r/3(…))); then the exact scaling by 2^k.
  const auto k = static_cast<int>(x * 1.4426950408889634 + (x < 0 ? -0.5 : 0.5));
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double e = 1.0;
  for (int n = 17; n >= 1; --n) e = 1.0 + r * e / n;
  return std::ldexp(e, k);
}

double cos_2pi(double u) {
  const double t = u * 4.0;  // exact
  const int k = static_cast<int>(t);
  const double f = t - k;  // exact
  switch (k & 3) {
    case 0: return cos_quarter(f);
    case 1: return -sin_quarter(f);
    case 2: return -cos_quarter(f);
    default: return sin_quarter(f);
  }
}

double sin_2pi(double u) {
  const double t = u * 4.0;
  const int k = static_cast<int>(t);
  const double f = t - k;
  switch (k & 3) {
    case 0: return sin_quarter(f);
    case 1: return cos_quarter(f);
    case 2: return -sin_quarter(f);
    default: return -cos_quarter(f);
  }
}

}  // namespace attnbench::detmath
