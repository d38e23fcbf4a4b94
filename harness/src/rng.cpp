#include "attnbench/rng.h"

#include <cmath>

#include "attnbench/detmath.h"
#include "attnbench/hash.h"

namespace attnbench {

namespace {
constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey k) {
  for (int round = 0; round < 10; ++round) {
    if (round) {
      k[0] += kW0;
      k[1] += kW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

PhiloxStream::PhiloxStream(uint64_t seed, std::string_view name, uint32_t domain)
    : PhiloxStream(seed, fnv1a32(name), domain) {}

PhiloxStream::PhiloxStream(uint64_t seed, uint32_t stream_id, uint32_t domain)
    : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}, stream_(stream_id), domain_(domain) {}

PhiloxCounter PhiloxStream::block(uint64_t index) const {
  return philox4x32_10({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream_, domain_}, key_);
}

uint32_t PhiloxStream::word(uint64_t n) const { return block(n >> 2)[n & 3]; }

void PhiloxStream::words(uint64_t first, uint64_t count, uint32_t* out) const {
  uint64_t n = first;
  const uint64_t end = first + count;
  while (n < end) {
    const PhiloxCounter b = block(n >> 2);
    for (uint64_t w = n & 3; w < 4 && n < end; ++w, ++n) *out++ = b[w];
  }
}

float PhiloxStream::uniform_f32(uint64_t n) const {
  return static_cast<float>(word(n) >> 8) * 0x1p-24f;
}

double PhiloxStream::uniform_f64(uint64_t n) const {
  const PhiloxCounter b = block((2 * n) >> 2);
  const uint32_t w0 = b[(2 * n) & 3], w1 = b[(2 * n + 1) & 3];
  return (static_cast<double>(w0 >> 5) * 0x1p26 + static_cast<double>(w1 >> 6)) * 0x1p-53;
}

void PhiloxStream::normal_pair(uint64_t k, double* even, double* odd) const {
  const PhiloxCounter b = block(k);  // uniforms 2k and 2k+1 are exactly block k
  const double u1 = (static_cast<double>(b[0] >> 5) * 0x1p26 + static_cast<double>(b[1] >> 6)) * 0x1p-53;
  const double u2 = (static_cast<double>(b[2] >> 5) * 0x1p26 + static_cast<double>(b[3] >> 6)) * 0x1p-53;
  const double radius = std::sqrt(-2.0 * detmath::log(1.0 - u1));  // 1 - u1 in (0, 1]
  *even = radius * detmath::cos_2pi(u2);
  *odd = radius * detmath::sin_2pi(u2);
}

double PhiloxStream::normal(uint64_t n) const {
  double even, odd;
  normal_pair(n >> 1, &even, &odd);
  return (n & 1) ? odd : even;
}

float method_uniform(uint64_t seed, std::string_view site, uint64_t n) {
  return PhiloxStream(seed, site, kDomainDraws).uniform_f32(n);
}

}  // namespace attnbench
