// STAT: chi-square goodness of fit with tail merging, and the power helpers.
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/check_stat.h"
#include "attnbench/rng.h"

using namespace attnbench;

TEST_CASE("STAT: chi-square tail and critical values match tables", "[unit]") {
  CHECK(chi_square_sf(3.841458820694124, 1) == Approx(0.05).epsilon(1e-9));
  CHECK(chi_square_sf(18.307038053275146, 10) == Approx(0.05).epsilon(1e-9));
  CHECK(chi_square_sf(10.827566170662733, 1) == Approx(1e-3).epsilon(1e-8));
  CHECK(chi_square_sf(149.44925277903890, 100) == Approx(0.001).epsilon(1e-8));
  CHECK(chi_square_critical(1e-3, 15) == Approx(37.69729821835383).epsilon(1e-9));
  // Noncentral: values from an independent implementation (scipy.stats.ncx2.sf).
  CHECK(noncentral_chi_square_sf(10.0, 3, 5.0) == Approx(0.29335135222254816).epsilon(1e-9));
  CHECK(noncentral_chi_square_sf(37.69766, 15, 60.0) == Approx(0.9956418169053154).epsilon(1e-9));
}

TEST_CASE("STAT: cells expecting fewer than 5 merge into one tail cell", "[unit]") {
  // n = 100: expectations 50, 30, 10, 4, 3, 2, 1, 0.
  const std::vector<double> p = {0.5, 0.3, 0.1, 0.04, 0.03, 0.02, 0.01, 0.0};
  const std::vector<int> cell = merge_cells(p, 100);
  CHECK(cell[7] == -1);
  CHECK(cell[6] == 0);
  CHECK(cell[5] == 0);
  CHECK(cell[4] == 0);
  CHECK(cell[3] == 0);  // 1+2+3+4 = 10 ≥ 5
  CHECK(cell[2] != 0);
  CHECK(cell[1] != cell[0]);
  // All small: one cell, nothing to test.
  const GofResult g = chi_square_gof({0.5, 0.5}, {2, 1});
  CHECK(g.df == 0);
  CHECK(g.p_value == 1.0);
}

TEST_CASE("STAT: a sample from the distribution passes, a skewed one fails, an impossible one fails", "[unit]") {
  const std::vector<double> p = {0.4, 0.3, 0.2, 0.1, 0.0};
  const PhiloxStream s(11, "stat.test", kDomainDraws);
  std::vector<int64_t> counts(5, 0), skewed(5, 0);
  for (int i = 0; i < 20000; ++i) {
    const double u = s.uniform_f32(i);
    counts[u < 0.4 ? 0 : u < 0.7 ? 1 : u < 0.9 ? 2 : 3]++;
    skewed[u < 0.42 ? 0 : u < 0.7 ? 1 : u < 0.9 ? 2 : 3]++;
  }
  CHECK(chi_square_gof(p, counts).p_value > 1e-3);
  CHECK(chi_square_gof(p, skewed).p_value < 1e-3);
  counts[4] = 1;
  const GofResult g = chi_square_gof(p, counts);
  CHECK(g.impossible);
  CHECK(g.p_value == 0.0);
  const OutputDecl d{"tokens", DType::i32, {1}, CheckClass::STAT};
  CHECK_FALSE(check_stat(d, {g}).pass);
}

TEST_CASE("STAT: power grows with n and reaches 1 for impossible outcomes", "[unit]") {
  const std::vector<double> p = {0.5, 0.3, 0.2}, alt = {0.45, 0.33, 0.22};
  const double small = chi_square_power(p, alt, 1000, 1e-3), large = chi_square_power(p, alt, 20000, 1e-3);
  CHECK(small < 0.5);
  CHECK(large > 0.99);
  CHECK(chi_square_power({0.5, 0.5, 0.0}, {0.5, 0.49, 0.01}, 2000, 1e-3) > 0.99);
  CHECK(total_variation(p, alt) == Approx(0.05));
}
