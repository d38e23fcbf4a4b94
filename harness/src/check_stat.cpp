#include "attnbench/check_stat.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/check.h"
#include "attnbench/error.h"

namespace attnbench {

std::vector<int> merge_cells(const std::vector<double>& probs, double n) {
  const int k = static_cast<int>(probs.size());
  std::vector<int> order;
  for (int i = 0; i < k; ++i)
    if (probs[i] > 0) order.push_back(i);
  // Smallest expectation first (ties by index, so the merge is deterministic).
  std::sort(order.begin(), order.end(), [&](int a, int b) { return probs[a] != probs[b] ? probs[a] < probs[b] : a < b; });
  std::vector<int> cell(k, -1);
  // The tail cell 0 takes outcomes while it, or the next outcome, expects fewer than kMinExpected.
  double tail = 0;
  size_t i = 0;
  while (i < order.size() && (n * probs[order[i]] < kMinExpected || (tail > 0 && tail < kMinExpected))) {
    tail += n * probs[order[i]];
    cell[order[i++]] = 0;
  }
  const int first = i > 0 ? 1 : 0;
  for (size_t j = i; j < order.size(); ++j) cell[order[j]] = first + static_cast<int>(j - i);
  return cell;
}

GofResult chi_square_gof(const std::vector<double>& probs, const std::vector<int64_t>& counts, std::string name) {
  ATTNBENCH_ASSERT(probs.size() == counts.size(), "chi_square_gof: one count per outcome");
  GofResult g;
  g.name = std::move(name);
  g.n = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  const double total_p = std::accumulate(probs.begin(), probs.end(), 0.0);
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] == 0 && counts[i] > 0) {
      g.impossible = true;
      g.impossible_outcome = static_cast<int64_t>(i);
      g.p_value = 0;
      return g;
    }
  }
  if (g.n == 0) return g;
  const double n = static_cast<double>(g.n);
  std::vector<double> p(probs.size());
  for (size_t i = 0; i < p.size(); ++i) p[i] = probs[i] / total_p;
  const std::vector<int> cell = merge_cells(p, n);
  const int cells = cell.empty() ? 0 : *std::max_element(cell.begin(), cell.end()) + 1;
  std::vector<double> expected(cells, 0.0), observed(cells, 0.0);
  for (size_t i = 0; i < p.size(); ++i) {
    if (cell[i] < 0) continue;
    expected[cell[i]] += n * p[i];
    observed[cell[i]] += static_cast<double>(counts[i]);
  }
  g.cells = cells;
  g.df = std::max(0, cells - 1);
  for (int c = 0; c < cells; ++c) g.statistic += (observed[c] - expected[c]) * (observed[c] - expected[c]) / expected[c];
  g.p_value = g.df > 0 ? chi_square_sf(g.statistic, g.df) : 1.0;
  return g;
}

namespace {

// P(a, x) by its series, for x < a + 1.
double gamma_p_series(double a, double x) {
  double term = 1.0 / a, sum = term;
  for (int k = 1; k < 100000; ++k) {
    term *= x / (a + k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

// Q(a, x) by its continued fraction (modified Lentz), for x ≥ a + 1.
double gamma_q_fraction(double a, double x) {
  constexpr double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 1e-16) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

}  // namespace

double gamma_q(double a, double x) {
  if (x <= 0) return 1.0;
  if (std::isinf(x)) return 0.0;
  return x < a + 1.0 ? 1.0 - gamma_p_series(a, x) : gamma_q_fraction(a, x);
}

double chi_square_sf(double x, double df) { return gamma_q(df / 2.0, x / 2.0); }

double chi_square_critical(double alpha, double df) {
  double lo = 0, hi = std::max(1.0, df);
  while (chi_square_sf(hi, df) > alpha) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (chi_square_sf(mid, df) > alpha ? lo : hi) = mid;
  }
  return hi;
}

double noncentral_chi_square_sf(double x, double df, double lambda) {
  if (lambda <= 0) return chi_square_sf(x, df);
  // Poisson(λ/2) mixture of central chi-squares with df + 2j degrees, summed outward from the mode.
  const double half = lambda / 2.0;
  const auto weight = [&](double j) { return std::exp(-half + j * std::log(half) - std::lgamma(j + 1.0)); };
  const double mode = std::floor(half);
  double sum = 0;
  for (double j = mode; j >= 0; --j) {
    const double w = weight(j);
    sum += w * chi_square_sf(x, df + 2 * j);
    if (w < 1e-17 && j < mode) break;
  }
  for (double j = mode + 1;; ++j) {
    const double w = weight(j);
    sum += w * chi_square_sf(x, df + 2 * j);
    if (w < 1e-17) break;
  }
  return std::min(1.0, sum);
}

double chi_square_power(const std::vector<double>& probs, const std::vector<double>& alt, double n, double alpha) {
  ATTNBENCH_ASSERT(probs.size() == alt.size(), "chi_square_power: one alternative per outcome");
  const std::vector<int> cell = merge_cells(probs, n);
  double impossible_mass = 0;
  const int cells = *std::max_element(cell.begin(), cell.end()) + 1;
  std::vector<double> p(cells, 0.0), q(cells, 0.0);
  for (size_t i = 0; i < probs.size(); ++i) {
    if (cell[i] < 0) {
      impossible_mass += alt[i];
      continue;
    }
    p[cell[i]] += probs[i];
    q[cell[i]] += alt[i];
  }
  double lambda = 0;
  for (int c = 0; c < cells; ++c) lambda += n * (q[c] - p[c]) * (q[c] - p[c]) / p[c];
  const double detect_impossible = 1.0 - std::pow(1.0 - std::min(1.0, impossible_mass), n);
  const double power = cells > 1 ? noncentral_chi_square_sf(chi_square_critical(alpha, cells - 1), cells - 1, lambda) : 0.0;
  return 1.0 - (1.0 - detect_impossible) * (1.0 - power);
}

double total_variation(const std::vector<double>& a, const std::vector<double>& b) {
  ATTNBENCH_ASSERT(a.size() == b.size(), "total_variation: sizes differ");
  double tv = 0;
  for (size_t i = 0; i < a.size(); ++i) tv += std::fabs(a[i] - b[i]);
  return 0.5 * tv;
}

OutputCheck check_stat(const OutputDecl& d, const std::vector<GofResult>& tests, double alpha) {
  OutputCheck o{d.name, CheckClass::STAT, true, "", Json::object()};
  double min_p = 1;
  const GofResult* worst = nullptr;
  int tested = 0;
  Json per_test = Json::array();
  for (const GofResult& g : tests) {
    if (g.df > 0 || g.impossible) ++tested;
    per_test.push_back({{"test", g.name}, {"n", g.n}, {"chi2", g.statistic}, {"df", g.df}, {"p_value", g.p_value}});
    if (!worst || g.p_value < min_p) {
      min_p = g.p_value;
      worst = &g;
    }
  }
  const double p = std::min(1.0, std::max(1, tested) * min_p);
  o.metrics["test"] = "chi-square goodness of fit, Bonferroni over tests";
  o.metrics["p_value"] = p;
  o.metrics["alpha"] = alpha;
  o.metrics["tests"] = per_test;
  if (worst && worst->impossible) {
    o.pass = false;
    o.message = cat(worst->name, ": outcome ", worst->impossible_outcome, " has probability 0 but occurred");
  } else if (p < alpha) {
    o.pass = false;
    o.message = cat("chi-square p = ", short_num(p), " < alpha ", short_num(alpha), " (", worst->name, ": chi2 ",
                    short_num(worst->statistic), " on ", worst->df, " df, n = ", worst->n, ", Bonferroni over ", tested,
                    " tests)");
  }
  return o;
}

}  // namespace attnbench
