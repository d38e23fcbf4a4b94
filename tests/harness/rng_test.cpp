// Philox4x32-10 against Random123's known answers, and the stream conventions of docs/design.md "Random numbers".
#include <catch2/catch.hpp>

#include <cmath>

#include "attnbench/detmath.h"
#include "attnbench/hash.h"
#include "attnbench/rng.h"

using namespace attnbench;

TEST_CASE("Philox4x32-10 matches Random123's known answers", "[unit]") {
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) == PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  // Random123's third vector: pi digits.
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("a stream's word n is word n mod 4 of block n div 4", "[unit]") {
  const uint64_t seed = 0x0123456789abcdefull;
  const PhiloxStream s(seed, "q", kDomainInputs);
  for (uint64_t n : {0ull, 1ull, 3ull, 4ull, 7ull, 1001ull, (1ull << 34) + 5}) {
    const auto block = philox4x32_10({static_cast<uint32_t>(n / 4), static_cast<uint32_t>((n / 4) >> 32), fnv1a32("q"), 0},
                                     {0x89abcdef, 0x01234567});
    CHECK(s.word(n) == block[n % 4]);
  }
  uint32_t words[11];
  s.words(3, 11, words);
  for (int i = 0; i < 11; ++i) CHECK(words[i] == s.word(3 + i));
}

TEST_CASE("draws and inputs use different domains", "[unit]") {
  const PhiloxStream in(7, "x", kDomainInputs), draw(7, "x", kDomainDraws);
  CHECK(in.word(0) != draw.word(0));
  CHECK(method_uniform(7, "x", 5) == draw.uniform_f32(5));
}

TEST_CASE("uniforms follow the normative bit recipes", "[unit]") {
  const PhiloxStream s(42, "u", kDomainDraws);
  for (uint64_t n = 0; n < 64; ++n) {
    CHECK(s.uniform_f32(n) == static_cast<float>(s.word(n) >> 8) * 0x1p-24f);
    const double expect = (static_cast<double>(s.word(2 * n) >> 5) * 0x1p26 + static_cast<double>(s.word(2 * n + 1) >> 6)) * 0x1p-53;
    CHECK(s.uniform_f64(n) == expect);
    CHECK(s.uniform_f64(n) < 1.0);
  }
}

TEST_CASE("FNV-1a-32 stream ids", "[unit]") {
  CHECK(fnv1a32("") == 0x811c9dc5u);
  CHECK(fnv1a32("a") == 0xe40c292cu);
  CHECK(fnv1a32("foobar") == 0xbf9cf968u);
}

TEST_CASE("the project's own log and cos are accurate to a few ulp", "[unit]") {
  for (double x : {1e-300, 1e-10, 0.1, 0.5, 0.7071, 1.0, 1.5, 2.0, 10.0, 12345.678, 1e300}) {
    const double ref = std::log(x);
    CHECK(std::fabs(detmath::log(x) - ref) <= 4 * std::fabs(ref) * 0x1p-52 + 1e-300);
  }
  for (int i = 0; i < 1000; ++i) {
    const double u = i / 1000.0;
    CHECK(std::fabs(detmath::cos_2pi(u) - std::cos(2 * M_PI * u)) < 1e-15);
    CHECK(std::fabs(detmath::sin_2pi(u) - std::sin(2 * M_PI * u)) < 1e-15);
  }
}

TEST_CASE("normals have the right moments", "[unit]") {
  const PhiloxStream s(3, "n", kDomainInputs);
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double z = s.normal(i);
    sum += z;
    sq += z * z;
  }
  CHECK(std::fabs(sum / n) < 0.01);        // 4.5 sigma
  CHECK(std::fabs(sq / n - 1.0) < 0.015);  // 4.7 sigma
}
