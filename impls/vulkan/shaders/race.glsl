// The decoding family's race stage on Vulkan (semantics: reference/decoding/race.h): the
// exponential race over a span of a row's tokens, key_x = log w_x − log(−log u_x) with accurate
// logs, u_x the fp32 uniform of element first + x of the draw site's Philox stream.
//
// The including shader defines `float race_log_weight(uint x)` (after including this file): the
// log-weight of token x, −inf for a token that takes no part (a sampler's processed logit; log p
// or log max(0, p − q) for speculative sampling). A team's lanes take whole Philox blocks of the
// span in turn; each keeps its best (race_better), and team_best (team_reduce.glsl) merges them.
// Element indices are 64-bit (uvec2: low, high word), formed with umulExtended and uaddCarry.
#ifndef ATTNBENCH_RACE_GLSL
#define ATTNBENCH_RACE_GLSL

#include "accurate_math.glsl"
#include "philox.glsl"
#include "race_candidate.glsl"

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

// A stretch of one race's tokens [x0, x0 + len) in whole Philox blocks: block b (b = 0, 1, …)
// of the stretch holds the words of tokens x0 − lead + 4b + j, j < 4; words outside the stretch
// are not its own.
struct RaceStretch {
  uvec2 first_block;
  uint lead;  // (first word) mod 4
};

// `first` is the element of token 0 of the race.
RaceStretch race_stretch(uvec2 first, uint x0) {
  const uvec2 n = add_wide(first, x0);
  return RaceStretch(uvec2((n.x >> 2) | (n.y << 30), n.y >> 2), n.x & 3u);
}

// Blocks a stretch of `len` tokens touches.
uint race_stretch_blocks(RaceStretch s, uint len) { return (s.lead + len + 3u) >> 2; }

// The four words of block b of the stretch.
uvec4 race_block(uvec2 key, uint stream, RaceStretch s, uint b) {
  const uvec2 block = add_wide(s.first_block, b);
  return philox4x32_10(uvec4(block.x, block.y, stream, PHILOX_DOMAIN_DRAWS), key);
}

float race_log_weight(uint x);
#ifdef RACE_BLOCK_FILTER
// Whether any token of [x_begin, x_end) may take part: a block with none costs no Philox call.
bool race_block_live(uint x_begin, uint x_end);
#endif

// This lane's part of the race over tokens [x0, x0 + len): blocks lane, lane + lanes, ...;
// best_key and best (0xffffffff: none) carry the lane's best across calls.
void race_span(uvec2 key, uint stream, uvec2 first, uint x0, uint len, uint lane, uint lanes, inout float best_key,
               inout uint best) {
  const RaceStretch st = race_stretch(first, x0);
  const uint blocks = race_stretch_blocks(st, len);
  for (uint b = lane; b < blocks; b += lanes) {
#ifdef RACE_BLOCK_FILTER
    const int begin = int(4u * b) - int(st.lead);
    if (!race_block_live(x0 + uint(max(begin, 0)), x0 + uint(min(begin + 4, int(len))))) continue;
#endif
    const uvec4 words = race_block(key, stream, st, b);
    for (uint j = 0u; j < 4u; ++j) {
      const int rel = int(4u * b + j) - int(st.lead);
      if (rel < 0 || rel >= int(len)) continue;
      const uint x = x0 + uint(rel);
      const float lw = race_log_weight(x);
      if (lw == ACC_NEG_INF) continue;
      const float k = lw - accurate_log(-accurate_log(philox_uniform_f32(words[j])));
      if (race_better(k, x, best_key, best)) {
        best_key = k;
        best = x;
      }
    }
  }
}

#endif
