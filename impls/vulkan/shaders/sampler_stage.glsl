// The decoding family's sampler stage on Vulkan (contract: reference/decoding/sampler.h; the
// algorithm, shared with CUDA: docs/design.md "The device sampler stage"), in two passes of one
// workgroup per row:
//   thresholds  per row of logits: temperature, top-k and top-p as a cut (SamplerCut): no sort,
//               radix selection on the logits' order keys in digits of 11, 11 and 10 bits, masses
//               as 64-bit fixed point (uvec2: low, high word) summed by integer atomics, so every
//               result is independent of the order lanes combine in;
//               A method's probability floor (epsilon, eta) is one more sweep: the kept set's
//               Z = Σ e and S = Σ e·(−d), the same fixed point, give the floor on e; typical's
//               search is that sweep, then top-p's search over keys of the distance from the
//               entropy; top-H's budget is that sweep, a rank select of the top N and the same
//               search over the logits' keys weighted by e·(ln Z − d);
//   finish      per sampled row: the kept mask (the cut, then min-p and the floor) and the race
//               over the kept tokens, or for Gumbel-top-k its k best keys (a rank select of the
//               race's keys, recomputed from their Philox words).
// In distribution mode every draw samples the one row of logits, so its thresholds are found once.
//
// The including shader defines, before this file:
//   local_size_x    the workgroup size WG: a multiple of 32 that divides the 2048 digits
//   SAMPLER_PARAMS  an expression for the row's SamplerParams (reference/decoding/sampler_common.h)
// and binds logits, kept, token and cuts at bindings 0 to 3 (declared here). Its atomics and
// barriers name workgroup scope (the atomics relaxed: barriers order them): GLSL's default device
// scope is invalid where the memory model lacks device scope (lavapipe). A method with a
// processor of its own calls the pieces one by one (sampler_thresholds and sampler_finish are the
// standard chain).
#ifndef ATTNBENCH_SAMPLER_STAGE_GLSL
#define ATTNBENCH_SAMPLER_STAGE_GLSL

#define TEAM gl_WorkGroupSize.x
#define WIDE true
#define RACE_BLOCK_FILTER

#include "accurate_math.glsl"
#include "race.glsl"
#include "team_reduce.glsl"

layout(binding = 0) readonly buffer SamplerLogits { float logits[]; };  // [prob_rows, V]
layout(binding = 1) coherent buffer SamplerKept { uint kept[]; };       // [rows, mask_words]
layout(binding = 2) writeonly buffer SamplerToken { int token[]; };     // [rows]

// What the thresholds pass leaves for the finish pass, per row of logits.
struct SamplerCut {
  float lmax;       // the largest logit
  uint finite;      // logits above −inf
  uint keep_from;   // kept: key ≥ keep_from ...
  uint tie_key;     // ... or key == tie_key and rank among those ties (by index) < tie_keep
  uint tie_keep;
  uint tie_ranked;  // 1: top-p keeps only part of the ties at its threshold
  uint greedy;      // NO_TOKEN, or the greedy row's token (T = 0 or nothing finite)
  float floor_e;    // the probability floor as e = p / max p: keep e ≥ it or l = lmax (0: off)
  uint typical_from;  // typical: keep a typical key ≥ it (sampler_typical_key)
  float typical_c;    // typical: the mean of d under p
};
layout(binding = 3) coherent buffer SamplerCuts { SamplerCut cuts[]; };  // [prob_rows]

const uint SAMPLER_BINS = ATTNBENCH_SAMPLER_DIGITS;
const uint NO_TOKEN = 0xffffffffu;

shared uint sampler_count[SAMPLER_BINS];
shared uint sampler_mass_lo[SAMPLER_BINS];
shared uint sampler_mass_hi[SAMPLER_BINS];
shared uint sampler_part[3 * gl_WorkGroupSize.x];  // a lane's partial sums: count, mass lo, mass hi
shared uint sampler_word[gl_WorkGroupSize.x / 32u];
shared uint sampler_found[5];                      // sampler_find_digit's answer

// ---- 64-bit unsigned arithmetic on uvec2 (low, high) --------------------------------------------

uvec2 u64_add(uvec2 a, uvec2 b) {
  uint carry;
  const uint lo = uaddCarry(a.x, b.x, carry);
  return uvec2(lo, a.y + b.y + carry);
}
uvec2 u64_sub(uvec2 a, uvec2 b) {
  uint borrow;
  const uint lo = usubBorrow(a.x, b.x, borrow);
  return uvec2(lo, a.y - b.y - borrow);
}
bool u64_less(uvec2 a, uvec2 b) { return a.y < b.y || (a.y == b.y && a.x < b.x); }
// a·n for a product below 2^64.
uvec2 u64_mul32(uvec2 a, uint n) {
  uint hi, lo;
  umulExtended(a.x, n, hi, lo);
  return uvec2(lo, a.y * n + hi);
}
// floor(a·n / 2^32).
uvec2 u64_mul32_shift32(uvec2 a, uint n) {
  uint h0, l0, h1, l1;
  umulExtended(a.x, n, h0, l0);
  umulExtended(a.y, n, h1, l1);
  uint carry;
  const uint lo = uaddCarry(l1, h0, carry);
  return uvec2(lo, h1 + carry);
}
float u64_to_float(uvec2 a) { return float(a.y) * 4294967296.0 + float(a.x); }
// a·b as 128 bits (words low to high).
uvec4 u64_mul_wide(uvec2 a, uvec2 b) {
  uint h00, l00, h01, l01, h10, l10, h11, l11;
  umulExtended(a.x, b.x, h00, l00);
  umulExtended(a.x, b.y, h01, l01);
  umulExtended(a.y, b.x, h10, l10);
  umulExtended(a.y, b.y, h11, l11);
  uint c1, c2, c3, c4, c5;
  uint w1 = uaddCarry(h00, l01, c1);
  w1 = uaddCarry(w1, l10, c2);
  uint w2 = uaddCarry(h01, h10, c3);
  w2 = uaddCarry(w2, l11, c4);
  w2 = uaddCarry(w2, c1 + c2, c5);
  return uvec4(l00, w1, w2, h11 + c3 + c4 + c5);
}
// floor((high·2^64 + low) / d) for high < d, so below 2^64: restoring division, a bit at a time.
uvec2 u128_div64(uvec2 high, uvec2 low, uvec2 d) {
  uvec2 rem = high, q = uvec2(0u);
  for (int i = 63; i >= 0; --i) {
    const bool carry = (rem.y & 0x80000000u) != 0u;  // rem·2 reaches 2^64: above d
    rem = uvec2((rem.x << 1) | ((i >= 32 ? low.y >> (i - 32) : low.x >> i) & 1u), (rem.y << 1) | (rem.x >> 31));
    q = uvec2(q.x << 1, (q.y << 1) | (q.x >> 31));
    if (carry || !u64_less(rem, d)) {
      rem = u64_sub(rem, d);
      q.x |= 1u;
    }
  }
  return q;
}

// ---- keys and masses ----------------------------------------------------------------------------

// A larger logit, a larger key; −0 keys as +0 (equal values must tie).
uint sampler_key(float l) {
  uint b = floatBitsToUint(l);
  if (b == 0x80000000u) b = 0u;
  return (b & 0x80000000u) != 0u ? ~b : (b | 0x80000000u);
}
float sampler_key_value(uint k) { return uintBitsToFloat((k & 0x80000000u) != 0u ? (k & 0x7fffffffu) : ~k); }

// floor(e·2^40) for e in [0, 1]: e·256 and its fraction are exact in fp32, and so is the
// fraction times 2^32 (conversion truncates).
uvec2 sampler_fixed(float e) {
  precise const float s = e * 256.0;
  const uint hi = uint(s);
  precise const float frac = (s - float(hi)) * 4294967296.0;
  return uvec2(uint(frac), hi);
}

// A row of logits as the passes see it: where it starts, and its cut.
struct SamplerRow {
  uint offset;
  SamplerCut cut;
};

// 0 at the max itself, so an inv_temperature that overflowed to inf (T below 2^-128) makes no NaN.
float sampler_log_weight(SamplerRow r, float l) {
  return l == r.cut.lmax ? 0.0 : (l - r.cut.lmax) * SAMPLER_PARAMS.inv_temperature;
}
float sampler_e(SamplerRow r, float l) { return accurate_exp(sampler_log_weight(r, l)); }

// ---- the radix search's pieces ------------------------------------------------------------------

void sampler_clear_bins() {
  for (uint b = gl_LocalInvocationID.x; b < SAMPLER_BINS; b += gl_WorkGroupSize.x) {
    sampler_count[b] = 0u;
    sampler_mass_lo[b] = 0u;
    sampler_mass_hi[b] = 0u;
  }
  barrier();
}

void sampler_bin_mass(uint b, uvec2 fx) {
  const uint old = atomicAdd(sampler_mass_lo[b], fx.x, gl_ScopeWorkgroup, 0, 0);
  const uint hi = fx.y + (old + fx.x < old ? 1u : 0u);  // the carry out of the low word
  if (hi != 0u) atomicAdd(sampler_mass_hi[b], hi, gl_ScopeWorkgroup, 0, 0);
}

// Digit `level` of a key (11, 11, 10 bits from the top) and whether the key's higher digits are
// `prefix`.
uint sampler_shift(uint level) { return level == 0u ? 21u : (level == 1u ? 10u : 0u); }
uint sampler_digit(uint k, uint level) { return (k >> sampler_shift(level)) & (level == 2u ? 1023u : 2047u); }
bool sampler_in_prefix(uint k, uint level, uint prefix) {
  return level == 0u || (k >> (level == 1u ? 21u : 10u)) == prefix;
}

// The crossing digit, from the top: the first (largest) digit d at which `above` plus the bins
// from the top through d reaches the goal, by counts (by_mass false) or masses. Each lane sums its
// SAMPLER_BINS / WG bins; one lane walks the partial sums, then the bins of the one it crossed in.
// top_p_fx > 0: the goal is floor(total · top_p_fx / 2^32) + add, total the sum of every bin's
// mass. Sets sampler_found = (d, above.x, above.y, goal.x, goal.y), above the sum of the bins over
// d; d = SAMPLER_BINS when the goal exceeds the total (nothing crosses it).
void sampler_find_digit(bool by_mass, uvec2 goal, uint top_p_fx, uint add) {
  const uint per = SAMPLER_BINS / gl_WorkGroupSize.x, lane = gl_LocalInvocationID.x;
  uvec2 mass = uvec2(0u);
  uint count = 0u;
  for (uint i = 0u; i < per; ++i) {
    const uint b = lane * per + i;
    count += sampler_count[b];
    mass = u64_add(mass, uvec2(sampler_mass_lo[b], sampler_mass_hi[b]));
  }
  sampler_part[3u * lane] = count;
  sampler_part[3u * lane + 1u] = mass.x;
  sampler_part[3u * lane + 2u] = mass.y;
  barrier();
  if (lane == 0u) {
    bool none = false;
    if (top_p_fx != 0u) {
      uvec2 total = uvec2(0u);
      for (uint t = 0u; t < gl_WorkGroupSize.x; ++t) total = u64_add(total, uvec2(sampler_part[3u * t + 1u], sampler_part[3u * t + 2u]));
      goal = u64_add(u64_mul32_shift32(total, top_p_fx), uvec2(add, 0u));
      none = u64_less(total, goal) || goal == uvec2(0u);
    }
    uvec2 above = uvec2(0u);
    uint t = gl_WorkGroupSize.x - 1u;
    for (;; --t) {
      const uvec2 part = by_mass ? uvec2(sampler_part[3u * t + 1u], sampler_part[3u * t + 2u]) : uvec2(sampler_part[3u * t], 0u);
      if (t == 0u || !u64_less(u64_add(above, part), goal)) break;
      above = u64_add(above, part);
    }
    uint b = t * per + per - 1u;
    for (;; --b) {
      const uvec2 bin = by_mass ? uvec2(sampler_mass_lo[b], sampler_mass_hi[b]) : uvec2(sampler_count[b], 0u);
      if (b == t * per || !u64_less(u64_add(above, bin), goal)) break;
      above = u64_add(above, bin);
    }
    sampler_found[0] = none ? SAMPLER_BINS : b;
    sampler_found[1] = above.x;
    sampler_found[2] = above.y;
    sampler_found[3] = goal.x;
    sampler_found[4] = goal.y;
  }
  barrier();
}

// ---- the stages ---------------------------------------------------------------------------------

// The row's largest logit and how many are finite.
SamplerRow sampler_scan_row(uint prow) {
  SamplerRow r;
  const uint V = uint(SAMPLER_PARAMS.vocab);
  r.offset = prow * V;
  uint best = sampler_key(ACC_NEG_INF), finite = 0u;
  for (uint x = gl_LocalInvocationID.x; x < V; x += gl_WorkGroupSize.x) {
    const float l = logits[r.offset + x];
    if (l > ACC_NEG_INF) {
      best = max(best, sampler_key(l));
      finite += 1u;
    }
  }
  r.cut = SamplerCut(sampler_key_value(team_max(best)), team_add(finite), 0u, 0u, 0u, 0u, NO_TOKEN, 0.0, 0u, 0.0);
  return r;
}

// Greedy (T = 0) or a row with nothing finite: the first largest logit, token 0 when none.
uint sampler_greedy_token(SamplerRow r) {
  const uint V = uint(SAMPLER_PARAMS.vocab);
  uint first = NO_TOKEN;
  if (r.cut.finite > 0u)
    for (uint x = gl_LocalInvocationID.x; x < V; x += gl_WorkGroupSize.x)
      if (logits[r.offset + x] == r.cut.lmax) first = min(first, x);
  first = team_min(first);
  return first == NO_TOKEN ? 0u : first;
}

// A token's key in a rank select: its logit's (RANK_LOGIT: every finite logit), or its race key
// d − log(−log u) with the race's uniform (RANK_GUMBEL: the kept tokens of sampled row `row`, whose
// mask sampler_select wrote).
const uint RANK_LOGIT = 0u, RANK_GUMBEL = 1u;
bool sampler_rank_key(SamplerRow r, uint mode, uint row, uint x, out uint k) {
  const float l = logits[r.offset + x];
  if (mode == RANK_LOGIT) {
    k = sampler_key(l);
    return l > ACC_NEG_INF;
  }
  if (((kept[row * uint(SAMPLER_PARAMS.mask_words) + x / 32u] >> (x % 32u)) & 1u) == 0u) return false;
  const uvec2 n = add_wide(mul_wide(row, uint(SAMPLER_PARAMS.vocab)), x);
  const uint w = philox_word(uvec2(SAMPLER_PARAMS.seed_lo, SAMPLER_PARAMS.seed_hi), SAMPLER_PARAMS.race_stream,
                             PHILOX_DOMAIN_DRAWS, n.x, n.y);
  k = sampler_key(sampler_log_weight(r, l) - accurate_log(-accurate_log(philox_uniform_f32(w))));
  return true;
}

// The k-th largest key (sampler_rank_key) of the row (0 < k < the tokens with a key), by counts:
// `key` is it, or the lowest key of the bin where the search stopped, that bin holding exactly the
// rank needed (whole); `need` is the rank still needed at `key` (how many of its ties are among the
// top k, by index).
void sampler_rank_select(SamplerRow r, uint mode, uint row, uint k, out uint key, out uint need, out bool whole) {
  const uint V = uint(SAMPLER_PARAMS.vocab);
  uint prefix = 0u;
  need = k;
  whole = false;
  for (uint level = 0u; level < 3u; ++level) {
    sampler_clear_bins();
    for (uint x = gl_LocalInvocationID.x; x < V; x += gl_WorkGroupSize.x) {
      uint t;
      if (sampler_rank_key(r, mode, row, x, t) && sampler_in_prefix(t, level, prefix))
        atomicAdd(sampler_count[sampler_digit(t, level)], 1u, gl_ScopeWorkgroup, 0, 0);
    }
    barrier();
    sampler_find_digit(false, uvec2(need, 0u), 0u, 0u);
    const uint d = sampler_found[0];
    need -= sampler_found[1];
    prefix = (prefix << (level == 2u ? 10u : 11u)) | d;
    // Every token of the bin is kept when it holds exactly the rank still needed.
    whole = sampler_count[d] == need;
    barrier();  // every lane has read the bins before the next level clears them
    if (whole || level == 2u) {
      key = prefix << sampler_shift(level);
      return;
    }
  }
}

// Top-k (0 < k < finite): r.cut.keep_from becomes the k-th largest key.
void sampler_top_k(inout SamplerRow r) {
  uint need;
  bool whole;
  sampler_rank_select(r, RANK_LOGIT, 0u, uint(SAMPLER_PARAMS.top_k), r.cut.keep_from, need, whole);
}

// ⌈diff / fx⌉ for 0 < diff ≤ ties·fx (so at most ties): a float estimate, then exact products.
uint sampler_ceil_div(uvec2 diff, uvec2 fx, uint ties) {
  uint n = uint(clamp(u64_to_float(diff) / u64_to_float(fx), 1.0, float(ties)));
  while (n > 1u && !u64_less(u64_mul32(fx, n - 1u), diff)) --n;
  while (n < ties && u64_less(u64_mul32(fx, n), diff)) ++n;
  return n;
}

// Top-p (top_p < 1) over the tokens with key ≥ r.cut.keep_from: the largest key t* with
// mass(key ≥ t*) ≥ target, and how many of the ties at t* the mass before them leaves below it.
void sampler_top_p(inout SamplerRow r) {
  const uint V = uint(SAMPLER_PARAMS.vocab);
  const uint floor_key = r.cut.keep_from;
  uint prefix = 0u;
  uvec2 above = uvec2(0u), target = uvec2(0u);
  for (uint level = 0u; level < 3u; ++level) {
    sampler_clear_bins();
    for (uint x = gl_LocalInvocationID.x; x < V; x += gl_WorkGroupSize.x) {
      const float l = logits[r.offset + x];
      if (!(l > ACC_NEG_INF)) continue;
      const uint k = sampler_key(l);
      if (k < floor_key || !sampler_in_prefix(k, level, prefix)) continue;
      const uint b = sampler_digit(k, level);
      atomicAdd(sampler_count[b], 1u, gl_ScopeWorkgroup, 0, 0);
      sampler_bin_mass(b, sampler_fixed(sampler_e(r, l)));
    }
    barrier();
    // The target, at the first level: floor(total · top_p_fx / 2^32), total the mass top-k kept.
    sampler_find_digit(true, u64_sub(target, above), level == 0u ? SAMPLER_PARAMS.top_p_fx : 0u, 0u);
    if (level == 0u) target = uvec2(sampler_found[3], sampler_found[4]);
    const uint d = sampler_found[0];
    above = u64_add(above, uvec2(sampler_found[1], sampler_found[2]));
    prefix = (prefix << (level == 2u ? 10u : 11u)) | d;
    const uint count = sampler_count[d];
    barrier();
    if (count == 1u && level < 2u) {
      // One token in the bin: it is the one the mass crosses the target at.
      r.cut.keep_from = max(floor_key, prefix << sampler_shift(level));
      return;
    }
    if (level == 2u) {
      // t* = prefix; its ties all have the same fx.
      const uvec2 fx = sampler_fixed(sampler_e(r, sampler_key_value(prefix)));
      const uint n = fx == uvec2(0u) ? count : sampler_ceil_div(u64_sub(target, above), fx, count);
      r.cut.keep_from = prefix;
      if (n < count) {
        r.cut.keep_from = prefix + 1u;
        r.cut.tie_key = prefix;
        r.cut.tie_keep = n;
        r.cut.tie_ranked = 1u;
      }
    }
  }
}

// Whether a finite logit's key passes the cut before min-p (the ranked ties counted apart).
bool sampler_above_cut(SamplerRow r, uint k) {
  return k >= r.cut.keep_from && !(r.cut.tie_ranked != 0u && k == r.cut.tie_key);
}

// Z = Σ e and S = Σ e·(−d) over the kept set so far (the cut, then min-p) as fixed point (bins 0
// and 1), the ranked ties' share added once (they have one e); every lane gets both.
void sampler_moments(SamplerRow r, out uvec2 z, out uvec2 s) {
  const uint V = uint(SAMPLER_PARAMS.vocab);
  const float min_p = SAMPLER_PARAMS.min_p;
  sampler_clear_bins();
  for (uint x = gl_LocalInvocationID.x; x < V; x += gl_WorkGroupSize.x) {
    const float l = logits[r.offset + x];
    if (!(l > ACC_NEG_INF) || !sampler_above_cut(r, sampler_key(l))) continue;
    const float d = sampler_log_weight(r, l), e = accurate_exp(d);
    if (e < min_p) continue;
    sampler_bin_mass(0u, sampler_fixed(e));
    sampler_bin_mass(1u, sampler_fixed(e > 0.0 ? e * -d : 0.0));  // e = 0 at d = −inf: no NaN
  }
  barrier();
  z = uvec2(sampler_mass_lo[0], sampler_mass_hi[0]);
  s = uvec2(sampler_mass_lo[1], sampler_mass_hi[1]);
  if (r.cut.tie_ranked != 0u) {
    const float d = sampler_log_weight(r, sampler_key_value(r.cut.tie_key)), e = accurate_exp(d);
    if (e >= min_p) {
      z = u64_add(z, u64_mul32(sampler_fixed(e), r.cut.tie_keep));
      s = u64_add(s, u64_mul32(sampler_fixed(e > 0.0 ? e * -d : 0.0), r.cut.tie_keep));
    }
  }
  barrier();  // every lane has read the bins
}

// The probability floor (SamplerParams.cutoff > 0: epsilon, eta) on e: H = ln Z + S/Z, floor =
// cutoff, or min(cutoff, √cutoff·exp(−H)) with cutoff_entropy, and floor_e = floor·Z. Every lane
// computes it from the same integers, so every lane has the same bits.
void sampler_floor(inout SamplerRow r) {
  uvec2 z, s;
  sampler_moments(r, z, s);
  const float Z = u64_to_float(z) / 1099511627776.0, S = u64_to_float(s) / 1099511627776.0;  // 2^40
  float floor_p = SAMPLER_PARAMS.cutoff;
  if (SAMPLER_PARAMS.cutoff_entropy != 0) floor_p = min(floor_p, sqrt(floor_p) * accurate_exp(-(accurate_log(Z) + S / Z)));
  r.cut.floor_e = floor_p * Z;
}

// Typical's key of a logit: larger for a smaller distance s = |d − c| from the mean of d (c), so
// that s ascending is key descending.
uint sampler_typical_key(SamplerRow r, float l) { return sampler_key(-abs(sampler_log_weight(r, l) - r.cut.typical_c)); }

// What a processor's mass search weighs: typical's keys of the distance from the entropy with
// masses e, top-H's logit keys with weights e·(L − d) = Z·h (L = ln Z), or arithmetic sampling's
// token ids (keys 2^32 − 1 − x: key descending is index ascending) with masses e over the kept
// mask of the sampled row.
const uint SEARCH_TYPICAL = 0u, SEARCH_TOP_H = 1u, SEARCH_INDEX = 2u;

// Top-H's weight of a logit with log-weight d: e·(L − d) as fixed point (below 2^24, as
// sampler_fixed needs: L ≤ ln V).
uvec2 sampler_top_h_weight(float d, float L) {
  const float e = accurate_exp(d);
  return e > 0.0 ? sampler_fixed(e * (L - d)) : uvec2(0u);  // e = 0 at d = −inf: no NaN
}

// A kept logit's key and mass in a search (false where min-p removes it).
bool sampler_search_token(SamplerRow r, uint mode, float l, float L, out uint k, out uvec2 fx) {
  const float d = sampler_log_weight(r, l), e = accurate_exp(d);
  if (e < SAMPLER_PARAMS.min_p) return false;
  if (mode == SEARCH_TYPICAL) {
    k = sampler_typical_key(r, l);
    fx = sampler_fixed(e);
  } else if (mode == SEARCH_INDEX) {
    k = 0u;  // the caller's: from the token id
    fx = sampler_fixed(e);
  } else {
    k = sampler_key(l);
    fx = sampler_top_h_weight(d, L);
  }
  return true;
}

// The mass search of typical, top-H and arithmetic sampling over the kept set so far (the cut,
// then min-p; SEARCH_INDEX: the kept mask of sampled row `row`): the largest key t with
// mass(key ≥ t) ≥ goal, goal = floor(total·fx / 2^32) + add from the level-0 total (fx = 0: the
// goal passed in). The cut's ranked ties (one logit: one key, one mass) are binned by lane 0 as
// tie_keep tokens. Returns t, or the lowest key of a bin holding one token (count 1; `level` its
// digit level); `above` is the mass of the keys over it; none: the goal exceeds the total.
uint sampler_mass_search(SamplerRow r, uint mode, uint row, float L, uint fx, uint add, out uvec2 above, inout uvec2 goal,
                         out uint count, out uint level, out bool none) {
  const uint V = uint(SAMPLER_PARAMS.vocab), lane = gl_LocalInvocationID.x, words = uint(SAMPLER_PARAMS.mask_words);
  uint tie_k = 0u;
  uvec2 tie_fx = uvec2(0u);
  bool ties = false;
  if (mode != SEARCH_INDEX && r.cut.tie_ranked != 0u &&
      sampler_search_token(r, mode, sampler_key_value(r.cut.tie_key), L, tie_k, tie_fx)) {
    tie_fx = u64_mul32(tie_fx, r.cut.tie_keep);
    ties = true;
  }
  uint prefix = 0u;
  above = uvec2(0u);
  if (fx != 0u) goal = uvec2(0u);
  none = false;
  for (level = 0u; level < 3u; ++level) {
    sampler_clear_bins();
    for (uint x = lane; x < V; x += gl_WorkGroupSize.x) {
      const float l = logits[r.offset + x];
      const bool member = mode == SEARCH_INDEX ? ((kept[row * words + x / 32u] >> (x % 32u)) & 1u) != 0u
                                               : l > ACC_NEG_INF && sampler_above_cut(r, sampler_key(l));
      if (!member) continue;
      uint k;
      uvec2 m;
      if (!sampler_search_token(r, mode, l, L, k, m)) continue;
      if (mode == SEARCH_INDEX) k = ~x;
      if (!sampler_in_prefix(k, level, prefix)) continue;
      const uint b = sampler_digit(k, level);
      atomicAdd(sampler_count[b], 1u, gl_ScopeWorkgroup, 0, 0);
      sampler_bin_mass(b, m);
    }
    if (lane == 0u && ties && sampler_in_prefix(tie_k, level, prefix)) {
      atomicAdd(sampler_count[sampler_digit(tie_k, level)], r.cut.tie_keep, gl_ScopeWorkgroup, 0, 0);
      sampler_bin_mass(sampler_digit(tie_k, level), tie_fx);
    }
    barrier();
    sampler_find_digit(true, u64_sub(goal, above), level == 0u ? fx : 0u, level == 0u ? add : 0u);
    if (level == 0u) goal = uvec2(sampler_found[3], sampler_found[4]);
    const uint d = sampler_found[0];
    none = d == SAMPLER_BINS;
    if (!none) {
      above = u64_add(above, uvec2(sampler_found[1], sampler_found[2]));
      prefix = (prefix << (level == 2u ? 10u : 11u)) | d;
      count = sampler_count[d];
    }
    barrier();
    if (none) return 0u;
    // One token in the bin, or the full key.
    if (count == 1u || level == 2u) return prefix << sampler_shift(level);
  }
  return 0u;  // not reached: level 2 returns
}

// Typical (SamplerParams.typical_fx > 0) over the kept set so far: c = −S/Z (so s = |−ln p − H|),
// then the mass search over typical keys with goal floor(Z·typical_fx / 2^32) (the level-0 total
// is Z): every token from the key it finds up stays, ties included.
void sampler_typical(inout SamplerRow r) {
  uvec2 z, s, above, goal;
  sampler_moments(r, z, s);
  r.cut.typical_c = -(u64_to_float(s) / u64_to_float(z));
  uint count, level;
  bool none;
  r.cut.typical_from = sampler_mass_search(r, SEARCH_TYPICAL, 0u, 0.0, SAMPLER_PARAMS.typical_fx, 0u, above, goal, count, level, none);
}

// The cut as a prefix of the row in order of key descending (the smaller index first on ties):
// the keys above `key`, and of its ties all, or the first n by index (ranked).
void sampler_set_prefix(inout SamplerRow r, uint key, bool ranked, uint n) {
  r.cut.keep_from = ranked ? key + 1u : key;
  r.cut.tie_key = ranked ? key : 0u;
  r.cut.tie_keep = ranked ? n : 0u;
  r.cut.tie_ranked = ranked ? 1u : 0u;
}

// The largest n ≤ cap with fx·n ≤ num (fx > 0; fx·cap below 2^64): a float estimate, then exact
// products.
uint sampler_floor_div(uvec2 num, uvec2 fx, uint cap) {
  uint n = uint(clamp(floor(u64_to_float(num) / u64_to_float(fx)), 0.0, float(cap)));
  while (n > 0u && u64_less(num, u64_mul32(fx, n))) --n;
  while (n < cap && !u64_less(num, u64_mul32(fx, n + 1u))) ++n;
  return n;
}

// Top-H (SamplerParams.top_h_n > 0) over the kept set so far: L = ln Z from the moments; D = the
// first N kept tokens (a rank select of the N-th key, its ties ranked by index), the shorter of
// that prefix and the chain's cut; the budget τ = floor(Σ_D w·top_h_fx / 2^32), w = e·(L − d) = Z·h,
// and the mass search with goal τ + 1 finds the first token whose w takes the running sum past τ.
// The tokens before it stay (at least the top one): the cut becomes that prefix.
void sampler_top_h(inout SamplerRow r) {
  uvec2 z, s;
  sampler_moments(r, z, s);
  const float L = accurate_log(u64_to_float(z) / 1099511627776.0);  // 2^40
  bool ranked = r.cut.tie_ranked != 0u;
  uint key = ranked ? r.cut.tie_key : r.cut.keep_from, n = r.cut.tie_keep;
  if (uint(SAMPLER_PARAMS.top_h_n) < r.cut.finite) {
    uint top_n_key, need;
    bool whole;
    sampler_rank_select(r, RANK_LOGIT, 0u, uint(SAMPLER_PARAMS.top_h_n), top_n_key, need, whole);
    if (top_n_key > key || (top_n_key == key && !whole && (!ranked || need < n))) {
      key = top_n_key;
      ranked = !whole;
      n = need;
    }
  }
  sampler_set_prefix(r, key, ranked, n);
  if (SAMPLER_PARAMS.top_h_fx == 0u) return;  // alpha = 1: all of D
  uvec2 above, goal;
  uint count, level;
  bool none;
  const uint t = sampler_mass_search(r, SEARCH_TOP_H, 0u, L, SAMPLER_PARAMS.top_h_fx, 1u, above, goal, count, level, none);
  if (none) return;  // the budget holds all of D
  const uint top = sampler_key(r.cut.lmax);
  if (count == 1u) {
    // The bin's one token of D is the crossing one: the keys above the bin stay, or the top token
    // alone when it is that one.
    const uint end = t + (1u << sampler_shift(level));
    if (top < end) sampler_set_prefix(r, top, true, 1u);
    else sampler_set_prefix(r, end, false, 0u);
    return;
  }
  // t's ties have one weight: as many stay as fit under τ after the mass above them.
  const uvec2 w = sampler_top_h_weight(sampler_log_weight(r, sampler_key_value(t)), L);
  uint kept_ties = w == uvec2(0u) ? count : sampler_floor_div(u64_sub(u64_sub(goal, uvec2(1u, 0u)), above), w, count);
  if (kept_ties == 0u && t == top) kept_ties = 1u;
  sampler_set_prefix(r, t, true, kept_ties);
}

// The rank, by index, of this lane's token among the workgroup's flagged tokens, and their total.
uint sampler_exclusive_rank(bool flag, out uint total) {
  const uint v = flag ? 1u : 0u;
  const uint within = subgroupExclusiveAdd(v), sum = subgroupAdd(v);  // with every lane active
  if (subgroupElect()) sampler_part[gl_SubgroupID] = sum;
  barrier();
  uint before = 0u;
  total = 0u;
  for (uint s = 0u; s < gl_NumSubgroups; ++s) {
    if (s < gl_SubgroupID) before += sampler_part[s];
    total += sampler_part[s];
  }
  barrier();
  return before + within;
}

// The kept mask: key ≥ keep_from (or among the first tie_keep ties), then min-p on e.
void sampler_select(uint row, SamplerRow r) {
  const uint V = uint(SAMPLER_PARAMS.vocab), words = uint(SAMPLER_PARAMS.mask_words), lane = gl_LocalInvocationID.x;
  const float min_p = SAMPLER_PARAMS.min_p;
  uint ties_before = 0u;
  for (uint base = 0u; base < V; base += gl_WorkGroupSize.x) {  // whole tiles: uniform trip count
    const uint x = base + lane;
    bool keep = false, tie = false;
    float l = ACC_NEG_INF;
    if (x < V) {
      l = logits[r.offset + x];
      if (l > ACC_NEG_INF) {
        const uint k = sampler_key(l);
        keep = k >= r.cut.keep_from;
        tie = r.cut.tie_ranked != 0u && k == r.cut.tie_key;
      }
    }
    if (r.cut.tie_ranked != 0u) {
      uint total;
      const uint rank = ties_before + sampler_exclusive_rank(tie, total);
      if (tie) keep = rank < r.cut.tie_keep;
      ties_before += total;
    }
    if (keep && min_p > 0.0) keep = sampler_e(r, l) >= min_p;
    if (keep && r.cut.floor_e > 0.0 && l != r.cut.lmax) keep = sampler_e(r, l) >= r.cut.floor_e;
    if (keep && SAMPLER_PARAMS.typical_fx != 0u) keep = sampler_typical_key(r, l) >= r.cut.typical_from;
    if (lane < gl_WorkGroupSize.x / 32u) sampler_word[lane] = 0u;
    barrier();
    if (keep) atomicOr(sampler_word[lane / 32u], 1u << (lane % 32u), gl_ScopeWorkgroup, 0, 0);
    barrier();
    const uint w = base / 32u + lane;
    if (lane < gl_WorkGroupSize.x / 32u && w < words) kept[row * words + w] = sampler_word[lane];
  }
  // The race reads the mask words other lanes wrote: a workgroup-scope barrier on buffer memory.
  controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                 gl_SemanticsAcquireRelease);
}

// The race over the kept tokens (log-weight (l − lmax)/T), skipping Philox blocks with none.
uint g_sampler_row;
SamplerRow g_sampler;
bool race_block_live(uint x_begin, uint x_end) {
  const uint words = uint(SAMPLER_PARAMS.mask_words), base = g_sampler_row * words;
  for (uint w = x_begin / 32u; w <= (x_end - 1u) / 32u; ++w) {
    const uint lo = max(x_begin, w * 32u) - w * 32u, hi = min(x_end, w * 32u + 32u) - w * 32u;
    const uint span = hi - lo == 32u ? 0xffffffffu : ((1u << (hi - lo)) - 1u) << lo;
    if ((kept[base + w] & span) != 0u) return true;
  }
  return false;
}
float race_log_weight(uint x) {
  const uint w = kept[g_sampler_row * uint(SAMPLER_PARAMS.mask_words) + x / 32u];
  if (((w >> (x % 32u)) & 1u) == 0u) return ACC_NEG_INF;
  return sampler_log_weight(g_sampler, logits[g_sampler.offset + x]);
}

void sampler_race(uint row, SamplerRow r) {
  g_sampler_row = row;
  g_sampler = r;
  const uint V = uint(SAMPLER_PARAMS.vocab);
  float best_key = ACC_NEG_INF;
  uint best = NO_TOKEN;
  race_span(uvec2(SAMPLER_PARAMS.seed_lo, SAMPLER_PARAMS.seed_hi), SAMPLER_PARAMS.race_stream, mul_wide(row, V), 0u, V,
            gl_LocalInvocationID.x, gl_WorkGroupSize.x, best_key, best);
  team_best(best_key, best);
  if (gl_LocalInvocationID.x == 0u) token[row] = int(best == NO_TOKEN ? 0u : best);
}

// Gumbel-top-k (SamplerParams.gumbel_k = k > 0), after the kept mask: the k largest race keys of
// the kept tokens by the rank select (each level recomputes the keys from their Philox words), the
// tokens above its key and the first `need` of its ties by index gathered in shared memory (the
// mass bins: key, index), each one's place by counting the better ones (key descending, the
// smaller index first); −1 past the kept count.
void sampler_gumbel_topk(uint row, SamplerRow r) {
  const uint V = uint(SAMPLER_PARAMS.vocab), k = uint(SAMPLER_PARAMS.gumbel_k), lane = gl_LocalInvocationID.x;
  const uint words = uint(SAMPLER_PARAMS.mask_words);
  uint n = 0u;
  for (uint w = lane; w < words; w += gl_WorkGroupSize.x) n += bitCount(kept[row * words + w]);
  n = team_add(n);
  uint from = 0u, need = 0u;
  bool whole = true;
  if (n > k) sampler_rank_select(r, RANK_GUMBEL, row, k, from, need, whole);
  if (lane == 0u) sampler_found[0] = 0u;
  barrier();
  uint ties_before = 0u;
  for (uint base = 0u; base < V; base += gl_WorkGroupSize.x) {  // whole tiles: uniform trip count
    const uint x = base + lane;
    uint key = 0u;
    const bool kept_x = x < V && sampler_rank_key(r, RANK_GUMBEL, row, x, key);
    bool take = kept_x && (whole ? key >= from : key > from);
    if (!whole) {
      const bool tie = kept_x && key == from;
      uint total;
      const uint rank = ties_before + sampler_exclusive_rank(tie, total);
      take = take || (tie && rank < need);
      ties_before += total;
    }
    if (take) {
      const uint slot = atomicAdd(sampler_found[0], 1u, gl_ScopeWorkgroup, 0, 0);
      sampler_mass_lo[slot] = key;
      sampler_mass_hi[slot] = x;
    }
  }
  barrier();
  const uint taken = sampler_found[0];  // min(k, n)
  for (uint i = lane; i < k; i += gl_WorkGroupSize.x) {
    if (i >= taken) {
      token[row * k + i] = -1;
      continue;
    }
    const uint key = sampler_mass_lo[i], x = sampler_mass_hi[i];
    uint place = 0u;
    for (uint j = 0u; j < taken; ++j)
      place += sampler_mass_lo[j] > key || (sampler_mass_lo[j] == key && sampler_mass_hi[j] < x) ? 1u : 0u;
    token[row * k + place] = int(x);
  }
}

// The thresholds pass for row `prow` of the logits: the standard chain's cut.
void sampler_thresholds(uint prow) {
  SamplerRow r = sampler_scan_row(prow);
  if (SAMPLER_PARAMS.temperature == 0.0 || r.cut.finite == 0u) {
    r.cut.greedy = sampler_greedy_token(r);
  } else {
    if (SAMPLER_PARAMS.top_k > 0 && uint(SAMPLER_PARAMS.top_k) < r.cut.finite) sampler_top_k(r);
    if (SAMPLER_PARAMS.top_p < 1.0) sampler_top_p(r);
    if (SAMPLER_PARAMS.cutoff > 0.0) sampler_floor(r);
    if (SAMPLER_PARAMS.typical_fx != 0u) sampler_typical(r);
    if (SAMPLER_PARAMS.top_h_n > 0) sampler_top_h(r);
  }
  if (gl_LocalInvocationID.x == 0u) cuts[prow] = r.cut;
}

// A greedy row (T = 0, or nothing finite): its mask keeps the token alone at T = 0 (nothing when
// nothing is finite) and the token is written; false for any other row.
bool sampler_finish_greedy(uint row, SamplerRow r) {
  if (r.cut.greedy == NO_TOKEN) return false;
  const uint words = uint(SAMPLER_PARAMS.mask_words), best = r.cut.greedy;
  const bool keep = SAMPLER_PARAMS.temperature == 0.0;
  for (uint w = gl_LocalInvocationID.x; w < words; w += gl_WorkGroupSize.x)
    kept[row * words + w] = keep && w == best / 32u ? 1u << (best % 32u) : 0u;
  const uint k = uint(SAMPLER_PARAMS.gumbel_k);
  if (k == 0u && gl_LocalInvocationID.x == 0u) token[row] = int(best);
  // Gumbel-top-k from the kept set: the argmax alone (T = 0), or nothing.
  for (uint i = gl_LocalInvocationID.x; i < k; i += gl_WorkGroupSize.x) token[row * k + i] = keep && i == 0u ? int(best) : -1;
  return true;
}

SamplerRow sampler_row_of(uint row) {
  const uint prow = SAMPLER_PARAMS.prob_rows == 1 ? 0u : row;
  SamplerRow r;
  r.offset = prow * uint(SAMPLER_PARAMS.vocab);
  r.cut = cuts[prow];
  return r;
}

// The finish pass for sampled row `row`: a greedy row keeps its token alone (at T = 0; nothing
// when nothing is finite), any other gets its mask and races.
void sampler_finish(uint row) {
  const SamplerRow r = sampler_row_of(row);
  if (sampler_finish_greedy(row, r)) return;
  sampler_select(row, r);
  if (SAMPLER_PARAMS.gumbel_k > 0) sampler_gumbel_topk(row, r);
  else sampler_race(row, r);
}

// Arithmetic sampling's pick for row `row` after its mask: Z over the kept set (the moments), the
// code's position floor(C·Z / 2^64), and the mass search over token ids with goal position + 1 for
// the token where the running sum first exceeds it (the one kept token of the bin it ends in);
// the code becomes (C·Z − above·2^64) / fx_v (arithmetic_common.h), computed by lane 0 and shared.
uint sampler_arithmetic_pick(uint row, SamplerRow r, inout uvec2 code) {
  const uint V = uint(SAMPLER_PARAMS.vocab), words = uint(SAMPLER_PARAMS.mask_words), lane = gl_LocalInvocationID.x;
  uvec2 z, s, above;
  sampler_moments(r, z, s);
  const uvec4 cz = u64_mul_wide(code, z);
  uvec2 goal = u64_add(cz.zw, uvec2(1u, 0u));
  uint count, level;
  bool none;
  const uint t = sampler_mass_search(r, SEARCH_INDEX, row, 0.0, 0u, 0u, above, goal, count, level, none);
  const uint last = ~t, first = last - ((1u << sampler_shift(level)) - 1u);  // the bin's indices
  uint v = NO_TOKEN;
  for (uint x = first + lane; x <= min(last, V - 1u); x += gl_WorkGroupSize.x)
    if (((kept[row * words + x / 32u] >> (x % 32u)) & 1u) != 0u) v = min(v, x);
  v = team_min(v);
  if (lane == 0u) {
    const uvec2 next = u128_div64(u64_sub(cz.zw, above), cz.xy, sampler_fixed(sampler_e(r, logits[r.offset + v])));
    sampler_found[0] = next.x;
    sampler_found[1] = next.y;
  }
  barrier();
  code = uvec2(sampler_found[0], sampler_found[1]);
  barrier();
  return v;
}

// The finish pass of arithmetic sampling (SamplerParams.arith_codes > 0) for sequence q: its code
// from the prompt's offset and its lattice point, then its steps in order (row t·S + q), each
// picking the token and carrying the code; a greedy row leaves the code.
void sampler_arithmetic(uint q) {
  const uint codes = uint(SAMPLER_PARAMS.arith_codes), S = uint(SAMPLER_PARAMS.rows) / uint(SAMPLER_PARAMS.arith_steps);
  const uint prompt = q / codes, i = q % codes;
  const uvec2 seed = uvec2(SAMPLER_PARAMS.seed_lo, SAMPLER_PARAMS.seed_hi);
  const uvec2 offset = uvec2(philox_word(seed, SAMPLER_PARAMS.arith_stream, PHILOX_DOMAIN_DRAWS, 2u * prompt, 0u),
                             philox_word(seed, SAMPLER_PARAMS.arith_stream, PHILOX_DOMAIN_DRAWS, 2u * prompt + 1u, 0u));
  uvec2 code = u64_add(offset, u128_div64(uvec2(i + 1u, 0u), uvec2(0u), uvec2(codes + 1u, 0u)));
  for (uint t = 0u; t < uint(SAMPLER_PARAMS.arith_steps); ++t) {
    const uint row = t * S + q;
    const SamplerRow r = sampler_row_of(row);
    if (sampler_finish_greedy(row, r)) continue;
    sampler_select(row, r);
    const uint v = sampler_arithmetic_pick(row, r, code);
    if (gl_LocalInvocationID.x == 0u) token[row] = int(v);
  }
}

#endif
