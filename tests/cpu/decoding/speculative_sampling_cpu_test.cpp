// speculative_sampling on the CPU backend: SEMI (and STAT in distribution mode) on both ISAs, the
// vectorised Philox against the harness's scalar one, the vectorised log's accuracy, and outputs
// independent of the thread count.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "attnbench/rng.h"
#include "impls/cpu/runtime/simd_math_avx2.h"
#include "method_cases.h"
#include "support.h"

using namespace attnbench;

namespace {
const std::vector<std::string>& kCases = test::kSpeculativeSamplingCases;
}  // namespace

TEST_CASE("speculative_sampling cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing(kCases) == std::vector<std::string>{});
}

TEST_CASE("speculative_sampling cpu: outputs do not depend on the thread count", "[cpu]") {
  test::require_backend("cpu");
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const std::string& id : {kCases[0], kCases[5]}) {
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, *one).at(0)) == test::output_hash(test::check_case(c, *three).at(0)));
  }
}

TEST_CASE("cpu: the AVX2 Philox matches the harness's words at any offset", "[cpu]") {
  for (const uint64_t seed : {0ull, 42ull, 0xFFFFFFFF00000001ull}) {
    const PhiloxStream s(seed, "spec.race", kDomainDraws);
    for (const uint64_t block0 : {0ull, 3ull, 0xFFFFFFFCull, (1ull << 40) + 17}) {
      uint32_t words[32];
      cpu::Avx2Math::philox_blocks(static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), s.stream_id(),
                                   kDomainDraws, block0, words);
      for (int i = 0; i < 32; ++i) CHECK(words[i] == s.word(4 * block0 + i));
      float u[8];
      _mm256_storeu_ps(u, cpu::Avx2Math::uniforms(words + 8));
      for (int i = 0; i < 8; ++i) CHECK(u[i] == s.uniform_f32(4 * block0 + 8 + i));
    }
  }
}

TEST_CASE("cpu: the AVX2 log is within 2 ulp of libm's, with its special values", "[cpu]") {
  const PhiloxStream s(5, "log.test", kDomainInputs);
  float x[8], y[8];
  int worst = 0;
  for (int i = 0; i < 40000; ++i) {
    for (int l = 0; l < 8; ++l) {
      const double u = s.uniform_f64(static_cast<uint64_t>(i * 8 + l));
      x[l] = static_cast<float>(std::ldexp(0.5 + 0.5 * u, static_cast<int>(u * 1e6) % 280 - 150));  // subnormals too
    }
    _mm256_storeu_ps(y, cpu::Avx2Math::log(_mm256_loadu_ps(x)));
    for (int l = 0; l < 8; ++l) {
      const double exact = std::log(static_cast<double>(x[l]));
      const float want = static_cast<float>(exact);
      const double ulp = std::fabs(static_cast<double>(std::nextafter(want, INFINITY)) - want);
      worst = std::max(worst, static_cast<int>(std::ceil(std::fabs(y[l] - exact) / ulp)));
    }
  }
  CHECK(worst <= 2);
  const float special[8] = {0.0f, INFINITY, 1.0f, 0x1p-149f, 0x1p-24f, 1.0f - 0x1p-24f, 2.0f, 0.5f};
  _mm256_storeu_ps(y, cpu::Avx2Math::log(_mm256_loadu_ps(special)));
  CHECK(y[0] == -INFINITY);
  CHECK(y[1] == INFINITY);
  CHECK(y[2] == 0.0f);
  CHECK(y[3] == Approx(std::log(0x1p-149)).epsilon(1e-6));
  CHECK(y[5] == Approx(std::log1p(-0x1p-24)).epsilon(1e-6));
}
