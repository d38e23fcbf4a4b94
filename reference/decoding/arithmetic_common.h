// Arithmetic sampling's codes in 64-bit fixed point (arithmetic_sampling.cpp), one definition for
// the reference, the CPU and CUDA (Vulkan's GLSL writes the same arithmetic on 32-bit words:
// impls/vulkan/shaders/sampler_stage.glsl). A code C stands for c = C·2^-64 in [0, 1).
//   initial   C = offset + floor(2^64·(i + 1)/(N + 1)) mod 2^64: code i of N on the lattice shifted
//             by one offset per prompt (the authors' evenly spaced codes plus a uniform)
//   pick      with fixed-point masses fx (the sampler stage's floor(e·2^40)) summing to Z over the
//             kept tokens in token-id order, the token v with S(v − 1) ≤ floor(C·Z / 2^64) < S(v)
//   next      C' = (C·Z − S(v − 1)·2^64) / fx_v, truncated: (c − F(v − 1)) / p_v exactly in the
//             masses' own terms
#ifndef ATTNBENCH_ARITHMETIC_COMMON_H
#define ATTNBENCH_ARITHMETIC_COMMON_H

#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench::decoding {

using u128 = unsigned __int128;

// floor(2^64·(i + 1)/(N + 1)) for 0 ≤ i < N.
ATTNBENCH_HD inline uint64_t arithmetic_lattice(int64_t i, int64_t n) {
  return static_cast<uint64_t>((static_cast<u128>(static_cast<uint64_t>(i + 1)) << 64) / static_cast<uint64_t>(n + 1));
}

// The high word of C·Z: the position of the code among the masses (pick v where S(v) first exceeds it).
ATTNBENCH_HD inline uint64_t arithmetic_position(uint64_t code, uint64_t z) {
  return static_cast<uint64_t>((static_cast<u128>(code) * z) >> 64);
}

// The code after picking v: (C·Z − S(v − 1)·2^64) / fx_v, below 2^64 since C·Z < S(v)·2^64.
ATTNBENCH_HD inline uint64_t arithmetic_next(uint64_t code, uint64_t z, uint64_t before, uint64_t fx) {
  const u128 t = static_cast<u128>(code) * z - (static_cast<u128>(before) << 64);
  return static_cast<uint64_t>(t / fx);
}

}  // namespace attnbench::decoding

#endif
