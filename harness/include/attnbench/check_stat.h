// STAT check class (docs/design.md "Checks"; derivation in docs/methodology.md "SET, SEMI and STAT"):
// distribution tests of what an impl samples.
//
// A method in distribution mode runs n independent rows and tests the counts of each outcome
// against the exact probabilities: Pearson's chi-square goodness of fit, with cells expecting fewer
// than 5 merged (smallest first) into one tail cell. An outcome of probability 0 that occurs makes
// the test fail outright (p = 0). Several tests of one output (e.g. one per token position) are
// combined by Bonferroni: p = min(1, m·min_i p_i), gated at kStatAlpha.
//
// Power helpers (for the power twins in tests): the noncentral chi-square tail, and the power of
// the merged test at n draws against an alternative distribution.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/method.h"

namespace attnbench {

inline constexpr double kStatAlpha = 1e-3;
inline constexpr double kMinExpected = 5.0;

struct GofResult {
  std::string name;         // which test ("position 2")
  int64_t n = 0;            // outcomes counted
  double statistic = 0;
  int df = 0;               // merged cells − 1; 0: nothing to test (p = 1)
  int cells = 0;
  double p_value = 1;
  bool impossible = false;  // an outcome of probability 0 occurred
  int64_t impossible_outcome = -1;
};

// The merged cells: cell_of[i] for each outcome with probs[i] > 0 (−1 for probs[i] == 0).
std::vector<int> merge_cells(const std::vector<double>& probs, double n);

GofResult chi_square_gof(const std::vector<double>& probs, const std::vector<int64_t>& counts, std::string name = "");

// Regularized upper incomplete gamma Q(a, x) and the chi-square tail P(X > x) with df degrees.
double gamma_q(double a, double x);
double chi_square_sf(double x, double df);
double chi_square_critical(double alpha, double df);  // x with chi_square_sf(x, df) = alpha
double noncentral_chi_square_sf(double x, double df, double lambda);

// Power of chi_square_gof at level alpha when the outcomes follow `alt` instead of `probs`, by the
// noncentral chi-square approximation (λ = n·Σ_cells (alt − p)² / p over the merged cells). An
// alternative that puts mass on an outcome of probability 0 is detected with probability
// 1 − (1 − that mass)^n.
double chi_square_power(const std::vector<double>& probs, const std::vector<double>& alt, double n, double alpha);

// Total variation distance ½·Σ|a − b|.
double total_variation(const std::vector<double>& a, const std::vector<double>& b);

// The STAT verdict of one output from its tests: Bonferroni over the tests, gated at alpha.
OutputCheck check_stat(const OutputDecl& d, const std::vector<GofResult>& tests, double alpha = kStatAlpha);

}  // namespace attnbench
