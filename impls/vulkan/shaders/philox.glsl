// Philox4x32-10 in GLSL, bit-identical to harness/src/rng.cpp (docs/design.md "Random numbers"):
//   key = (seed low 32 bits, seed high 32 bits); counter = (index low, index high, stream, domain)
//   word n of a stream = word n mod 4 of the block at index n div 4
//   a method's uniform u_n = (w_n >> 8)·2^-24
// umulExtended gives the 32x32 -> 64-bit products the rounds need without 64-bit integers.
#ifndef ATTNBENCH_PHILOX_GLSL
#define ATTNBENCH_PHILOX_GLSL

#define PHILOX_DOMAIN_INPUTS 0u
#define PHILOX_DOMAIN_DRAWS 1u

uvec4 philox4x32_10(uvec4 c, uvec2 k) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k += uvec2(0x9E3779B9u, 0xBB67AE85u);
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}

// Word n = (n_lo, n_hi) of the stream (key, stream, domain).
uint philox_word(uvec2 key, uint stream, uint domain, uint n_lo, uint n_hi) {
  const uvec4 block = philox4x32_10(uvec4((n_lo >> 2) | (n_hi << 30), n_hi >> 2, stream, domain), key);
  return block[n_lo & 3u];
}

// The fp32 uniform in [0, 1) of every method draw.
float philox_uniform_f32(uint word) { return float(word >> 8) * (1.0 / 16777216.0); }

#endif
