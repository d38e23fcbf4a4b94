// speculative_sampling's draw sites (reference/decoding/speculative_sampling_common.h), for the
// race kernel and for the probe that tests them against the host:
//   U("spec.accept", n)  n = row·K + i
//   U("spec.race", n)    n = (row·(K+1) + position)·V + token: the race stage (race.glsl) over a
//                        row's vocabulary from element speculative_race_first(...)
#ifndef ATTNBENCH_SPECULATIVE_SAMPLING_DRAWS_GLSL
#define ATTNBENCH_SPECULATIVE_SAMPLING_DRAWS_GLSL

#include "race.glsl"

// The word, and the uniform, of draft i's acceptance test in row `row`.
uint accept_word(uvec2 key, uint stream, uint row, uint K, uint i) {
  const uvec2 n = add_wide(mul_wide(row, K), i);
  return philox_word(key, stream, PHILOX_DOMAIN_DRAWS, n.x, n.y);
}

float accept_uniform(uvec2 key, uint stream, uint row, uint K, uint i) {
  return philox_uniform_f32(accept_word(key, stream, row, K, i));
}

// The element of token 0 of the race at `position` of row `row`. row·(K+1) + position < 2^32:
// the schema caps rows at 10^7 and K at 64.
uvec2 speculative_race_first(uint row, uint K, uint position, uint V) { return mul_wide(row * (K + 1u) + position, V); }

#endif
