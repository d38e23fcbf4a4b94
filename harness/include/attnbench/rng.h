// Random numbers, normative (docs/design.md "Random numbers"): one generator, Philox4x32-10, for inputs and for
// every random choice a method makes.
//
//   key     = (seed low 32 bits, seed high 32 bits)
//   counter = (index low, index high, stream, domain)
//   stream  = FNV-1a-32 of the tensor or draw-site name
//   domain  = 0 for input generation, 1 for a method's own draws
//   word n of a stream = word n mod 4 of the block at index n div 4
//
// A method's draws use the fp32 uniform u_n = (w_n >> 8)·2^-24 (impls and reference alike; the
// reference widens it exactly). fp64 uniforms and normals serve input generation only, and are
// built from correctly rounded operations and the project's own log/cos (detmath.h), so another
// machine's libm cannot change an input bit.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace attnbench {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

inline constexpr uint32_t kDomainInputs = 0;
inline constexpr uint32_t kDomainDraws = 1;

class PhiloxStream {
 public:
  PhiloxStream(uint64_t seed, std::string_view name, uint32_t domain);
  PhiloxStream(uint64_t seed, uint32_t stream_id, uint32_t domain);

  uint32_t stream_id() const { return stream_; }
  uint32_t word(uint64_t n) const;
  // Words [first, first + count) into out; computes each block once.
  void words(uint64_t first, uint64_t count, uint32_t* out) const;
  // u_n = (w_n >> 8)·2^-24 in [0, 1): the uniform of every method draw.
  float uniform_f32(uint64_t n) const;
  // ((w_2n >> 5)·2^26 + (w_2n+1 >> 6))·2^-53 in [0, 1): input generation only.
  double uniform_f64(uint64_t n) const;
  // Standard normals by Box–Muller over block k = n div 2 (fp64 uniforms 2k and 2k+1 of the
  // stream, i.e. words 4k..4k+3): r = sqrt(−2·log(1 − u_2k)), θ = 2π·u_2k+1; normal 2k = r·cos θ,
  // normal 2k+1 = r·sin θ, with detmath's log, cos and sin.
  double normal(uint64_t n) const;
  void normal_pair(uint64_t k, double* even, double* odd) const;  // normals 2k and 2k+1

 private:
  PhiloxCounter block(uint64_t index) const;
  PhiloxKey key_;
  uint32_t stream_;
  uint32_t domain_;
};

// The uniform a method draws for element n of site `site` (domain 1), as fp32.
float method_uniform(uint64_t seed, std::string_view site, uint64_t n);

}  // namespace attnbench
