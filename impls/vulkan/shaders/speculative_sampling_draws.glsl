// The draws of speculative_sampling (reference/decoding/speculative_sampling_common.h), for the
// race kernel and for the probe that tests them against the host (philox.glsl for the stream):
//   U("spec.accept", n)  n = row·K + i
//   U("spec.race", n)    n = (row·(K+1) + position)·V + token
// Indices are 64-bit (uvec2: low, high word), formed with umulExtended and uaddCarry.
#ifndef ATTNBENCH_SPECULATIVE_SAMPLING_DRAWS_GLSL
#define ATTNBENCH_SPECULATIVE_SAMPLING_DRAWS_GLSL

#include "philox.glsl"

uvec2 mul_wide(uint a, uint b) {
  uint hi, lo;
  umulExtended(a, b, hi, lo);
  return uvec2(lo, hi);
}

uvec2 add_wide(uvec2 a, uint b) {
  uint carry;
  const uint lo = uaddCarry(a.x, b, carry);
  return uvec2(lo, a.y + carry);
}

// The word, and the uniform, of draft i's acceptance test in row `row`.
uint accept_word(uvec2 key, uint stream, uint row, uint K, uint i) {
  const uvec2 n = add_wide(mul_wide(row, K), i);
  return philox_word(key, stream, PHILOX_DOMAIN_DRAWS, n.x, n.y);
}

float accept_uniform(uvec2 key, uint stream, uint row, uint K, uint i) {
  return philox_uniform_f32(accept_word(key, stream, row, K, i));
}

// A stretch of one race's tokens [x0, x0 + len) in whole Philox blocks: block b (b = 0, 1, …)
// of the stretch holds the words of tokens x0 − lead + 4b + j, j < 4; words outside the stretch
// are not its own.
struct RaceStretch {
  uvec2 first_block;
  uint lead;  // (first word) mod 4
};

// row·(K+1) + position < 2^32: the schema caps rows at 10^7 and K at 64.
RaceStretch race_stretch(uint row, uint K, uint position, uint V, uint x0) {
  const uvec2 n = add_wide(mul_wide(row * (K + 1u) + position, V), x0);
  return RaceStretch(uvec2((n.x >> 2) | (n.y << 30), n.y >> 2), n.x & 3u);
}

// Blocks a stretch of `len` tokens touches.
uint race_stretch_blocks(RaceStretch s, uint len) { return (s.lead + len + 3u) >> 2; }

// The four words of block b of the stretch.
uvec4 race_block(uvec2 key, uint stream, RaceStretch s, uint b) {
  const uvec2 block = add_wide(s.first_block, b);
  return philox4x32_10(uvec4(block.x, block.y, stream, PHILOX_DOMAIN_DRAWS), key);
}

#endif
