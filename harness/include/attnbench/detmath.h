// log, exp and cos built only from + − × ÷ (correctly rounded in IEEE arithmetic, and compiled with
// -ffp-contract=off), so their results are the same bits on every machine and libm. Accurate to
// a few ulp; used by input generation, never by timed code.
#pragma once

namespace attnbench::detmath {

double log(double x);           // x > 0
double exp(double x);           // 0 below −745, +inf above 709
double cos_2pi(double u);       // cos(2πu), u in [0, 1)
double sin_2pi(double u);       // sin(2πu), u in [0, 1)

}  // namespace attnbench::detmath
