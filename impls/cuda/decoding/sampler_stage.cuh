// The decoding family's sampler stage on CUDA (contract: reference/decoding/sampler.h; algorithm:
// docs/design.md "The device sampler stage", shared with impls/vulkan/shaders/sampler_stage.glsl).
// One CTA of kThreads threads takes one row; a sampling method's kernel calls sample_row() per row
// (or plan_row() once and finish_row() per row when its rows share one row of logits), and later
// samplers (typical, epsilon, eta, ...) reuse the pieces:
//   order_key        a finite logit's fp32 bits made monotone (−0 as +0)
//   row_stats        pass 1: the row's max, its first index and the count of finite logits
//   top_k_key        radix select of the k-th largest key: digits of 11, 11 and 10 bits, a 2048-bin
//                    shared histogram of counts per level, stopping when the crossing bin holds
//                    exactly the rank still needed
//   top_p_cut        the same search over masses fx = floor(exp((l − lmax)·inv_T)·2^40) (shared
//                    64-bit atomics: integer sums, so the result does not depend on the order
//                    threads add in), stopping when the crossing bin holds one token; then the
//                    ties at t*: n = min(ties, ⌈(target − above)/fx*⌉)
//   probability_floor  a method's probability floor (epsilon, eta): the kept set's Z = Σ e and
//                    S = Σ e·(−d) in the same fixed point (kept_moments), then floor·Z on e
//   typical_cut      typical's search: the moments, then top-p's mass search (mass_search) over
//                    keys of −|d − c|, c = −S/Z the mean of d, every tie at the result kept
//   top_h_cut        top-H's budget: ln Z from the moments, the first N kept tokens (rank_select),
//                    then the mass search over the logits' keys with weights e·(ln Z − d) = Z·h
//                    for the first token past the budget; the result is the chain's cut, shorter
//   arithmetic_pick  arithmetic sampling after the mask: the mass search over the kept tokens in
//                    token-id order for the code's position, then the code rescaled
//   gumbel_top_k     Gumbel-top-k after the mask: the rank select over the kept tokens' race keys,
//                    the k gathered and ordered in shared memory
//   select_and_race  the last pass: kept bits to the mask (a warp's ballot is one mask word), ties
//                    at t* ranked by index (a block scan per tile) only when 0 < n < ties, min-p as
//                    e ≥ min_p, and the exponential race (race.cuh) over the kept tokens, Philox
//                    blocks with no kept token skipped
// The crossing digit of a level is found by a block suffix scan (8 bins per thread, shuffles, then
// the 8 warps' sums in shared memory) and a walk of the one thread's 8 bins whose range holds it:
// integer sums, deterministic.
//
// Reads of the row: once for the max, once per digit level of each threshold that is on (fewer
// when a search stops early), once to select and race. Shared memory: 2048 int counts + 2048
// 64-bit masses (24 KiB) and a few words; registers: the 256-thread bound (__launch_bounds__ in
// the kernel). expf and logf are CUDA's accurate ones (never __expf/__logf): masses and race keys
// must stay within the reference's boundary bands.
//
// Deviations from the brief that drove this file, none in the kept sets: target = ⌊total·fx_p /
// 2^32⌋ is computed by splitting total into 32-bit halves (a·fx_p + ⌊b·fx_p / 2^32⌋, exact since
// total < 2^60) rather than with __umul64hi; the log-weight of the token at lmax is 0 exactly (so an
// inv_T that overflowed to inf cannot make it NaN).
#pragma once

#include <cstdint>

#include "../runtime/device_math.cuh"
#include "../runtime/philox.cuh"
#include "race.cuh"
#include "reference/decoding/arithmetic_common.h"
#include "reference/decoding/sampler_common.h"
#include "sampling_launch.h"

namespace attnbench::cuda::sampler {

using u64 = unsigned long long;  // the type of CUDA's 64-bit shared atomicAdd

inline constexpr int kThreads = sampling::kThreads;
inline constexpr int kWarps = kThreads / 32;
inline constexpr int kDigits = ATTNBENCH_SAMPLER_DIGITS;
inline constexpr int kNoDigit = kDigits;  // a token outside the level's prefix
static_assert(kDigits == 8 * kThreads, "the crossing scan gives each thread 8 bins");

// Digit levels, high to low: shifts 21, 10, 0 and widths 11, 11, 10.
__device__ __forceinline__ int level_shift(int level) { return level == 0 ? 21 : (level == 1 ? 10 : 0); }
__device__ __forceinline__ uint32_t level_mask(int level) { return level == 2 ? 0x3ffu : 0x7ffu; }

// The CTA's shared working memory.
struct Shared {
  int counts[kDigits];
  u64 mass[kDigits];
  u64 warp_u64[kWarps];
  float warp_f[kWarps];
  int warp_i[kWarps], warp_j[kWarps];
  int digit;
  u64 above;
  race::Candidate best[kWarps];
};

// Larger logit, larger key; −0 as +0 (they compare equal). Finite logits only.
__device__ __forceinline__ uint32_t order_key(float l) {
  const uint32_t u = __float_as_uint(l + 0.0f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
// The logit of a key (the inverse of order_key).
__device__ __forceinline__ float key_value(uint32_t key) {
  return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

// d = (l − lmax)·inv_T, the race's log-weight (0 at the max itself).
__device__ __forceinline__ float log_weight(float l, float lmax, float inv_t) {
  return l == lmax ? 0.0f : (l - lmax) * inv_t;
}
// ⌊v·2^40⌋ for v in [0, 1]: v·2^40 is exact in fp32, so the truncating conversion is the floor.
__device__ __forceinline__ u64 to_fixed(float v) {
  return static_cast<u64>(v * 1099511627776.0f);  // 2^ATTNBENCH_SAMPLER_MASS_FRAC_BITS
}
__device__ __forceinline__ float from_fixed(u64 fx) { return static_cast<float>(fx) * (1.0f / 1099511627776.0f); }
// fx = ⌊e·2^40⌋, e = exp(d) ≤ 1.
__device__ __forceinline__ u64 fixed_mass(float l, float lmax, float inv_t) { return to_fixed(expf(log_weight(l, lmax, inv_t))); }
// ⌊total·fx_p / 2^32⌋ for total < 2^60, exactly: total = a·2^32 + b.
__device__ __forceinline__ u64 mass_target(u64 total, uint32_t top_p_fx) {
  const u64 a = total >> 32, b = total & 0xffffffffull;
  return a * top_p_fx + ((b * top_p_fx) >> 32);
}

struct RowStats {
  float lmax;     // −inf when nothing is finite
  int first_max;  // the smallest index holding lmax (INT_MAX when nothing is finite)
  int finite;
};

// Pass 1. Every thread gets the row's stats.
__device__ __forceinline__ RowStats row_stats(const float* l, int V, Shared& sh) {
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  float best = neg_inf();
  int index = 0x7fffffff, finite = 0;
  for (int x = tid; x < V; x += kThreads) {
    const float v = l[x];
    if (v > neg_inf()) {
      ++finite;
      if (v > best) best = v, index = x;  // x grows: a thread keeps its first maximum
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    const float b = __shfl_xor_sync(0xffffffffu, best, off);
    const int i = __shfl_xor_sync(0xffffffffu, index, off);
    if (b > best || (b == best && i < index)) best = b, index = i;
    finite += __shfl_xor_sync(0xffffffffu, finite, off);
  }
  if (lane == 0) sh.warp_f[warp] = best, sh.warp_i[warp] = index, sh.warp_j[warp] = finite;
  __syncthreads();
  RowStats s{sh.warp_f[0], sh.warp_i[0], sh.warp_j[0]};
  for (int w = 1; w < kWarps; ++w) {
    const float b = sh.warp_f[w];
    if (b > s.lmax || (b == s.lmax && sh.warp_i[w] < s.first_max)) s.lmax = b, s.first_max = sh.warp_i[w];
    s.finite += sh.warp_j[w];
  }
  __syncthreads();  // warp_* are free again
  return s;
}

// Σ of v over the threads at or after this one (inclusive suffix), and the block's total.
// Synchronises twice; warp_u64 is free again on return.
__device__ __forceinline__ u64 block_suffix_sum(u64 v, Shared& sh, u64* total) {
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  u64 s = v;
  for (int off = 1; off < 32; off <<= 1) {
    const u64 t = __shfl_down_sync(0xffffffffu, s, off);
    if (lane + off < 32) s += t;
  }
  if (lane == 0) sh.warp_u64[warp] = s;  // the warp's total
  __syncthreads();
  u64 all = 0;
  for (int w = 0; w < kWarps; ++w) {
    all += sh.warp_u64[w];
    if (w > warp) s += sh.warp_u64[w];
  }
  *total = all;
  __syncthreads();
  return s;
}

// The crossing digit of a level whose bins are bin(i): the largest d with Σ_{i ≥ d} bin(i) ≥ need
// (1 ≤ need ≤ the total). `suffix` and `mine` are this thread's from block_suffix_sum over its
// bins 8t .. 8t+7; the one thread whose range holds d writes sh.digit and sh.above = Σ_{i > d}.
// The caller synchronises before reading them.
template <typename Bin>
__device__ __forceinline__ void crossing_digit(Bin bin, u64 need, u64 suffix, u64 mine, Shared& sh) {
  if (!(suffix >= need && suffix - mine < need)) return;
  const int t = static_cast<int>(threadIdx.x);
  u64 above = suffix - mine;
  for (int e = 7; e >= 0; --e) {
    const u64 h = bin(8 * t + e);
    if (above + h >= need) {
      sh.digit = 8 * t + e;
      sh.above = above;
      return;
    }
    above += h;
  }
}

// Tokens a search counts (or weighs) a key of, and tokens it adds by hand: `count` tokens of key
// `key` and total mass `fx` (top-p's ranked ties inside typical's search; count 0: none).
struct Extra {
  uint32_t key = 0;
  int count = 0;
  u64 fx = 0;
};

// One level's histogram over the tokens x with key_of(x, &key) whose bits above `shift` are
// `prefix`: counts, and with kMass their masses mass_of(x); then `extra`. Starts and ends with a
// barrier.
template <bool kMass, typename KeyOf, typename MassOf>
__device__ __forceinline__ void histogram(int V, int level, uint32_t prefix, KeyOf key_of, MassOf mass_of, const Extra& extra,
                                          Shared& sh) {
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31;
  for (int i = tid; i < kDigits; i += kThreads) {
    sh.counts[i] = 0;
    if (kMass) sh.mass[i] = 0;
  }
  __syncthreads();
  const int shift = level_shift(level);
  const uint32_t high = level == 0 ? 0u : (0xffffffffu << (shift + (level == 1 ? 11 : 10)));
  for (int base = 0; base < V; base += kThreads) {  // whole warps: the collectives below
    const int x = base + tid;
    int digit = kNoDigit;
    uint32_t key = 0;
    if (x < V && key_of(x, &key) && (key & high) == prefix) digit = static_cast<int>((key >> shift) & level_mask(level));
    // Many tokens share a digit at the high levels: one atomic per digit and warp.
    const unsigned same = __match_any_sync(0xffffffffu, digit);
    const bool leader = lane == __ffs(static_cast<int>(same)) - 1;
    if (digit != kNoDigit && leader) atomicAdd(&sh.counts[digit], __popc(same));
    if (kMass) {
      u64 fx = digit != kNoDigit ? mass_of(x) : 0ull;
      const unsigned valid = __ballot_sync(0xffffffffu, digit != kNoDigit);
      if (valid == 0) continue;
      const unsigned mixed = __ballot_sync(0xffffffffu, digit != kNoDigit && same != valid);
      if (mixed == 0) {
        // One digit for the whole warp (the common case at level 0): a warp sum, one atomic.
        for (int off = 16; off > 0; off >>= 1) fx += __shfl_xor_sync(0xffffffffu, fx, off);
        if (digit != kNoDigit && leader) atomicAdd(&sh.mass[digit], fx);
      } else if (fx != 0) {
        atomicAdd(&sh.mass[digit], fx);
      }
    }
  }
  if (tid == 0 && extra.count > 0 && (extra.key & high) == prefix) {
    const int digit = static_cast<int>((extra.key >> shift) & level_mask(level));
    atomicAdd(&sh.counts[digit], extra.count);
    if (kMass) atomicAdd(&sh.mass[digit], extra.fx);
  }
  __syncthreads();
}

// A finite logit's key at or above floor_key (top-k's and top-p's tokens).
struct LogitKey {
  const float* l;
  uint32_t floor_key;
  __device__ __forceinline__ bool operator()(int x, uint32_t* key) const {
    const float v = l[x];
    if (!(v > neg_inf())) return false;
    *key = order_key(v);
    return *key >= floor_key;
  }
};

// The k-th largest of the keys key_of gives (0 < k < the tokens with a key), by counts: `key` is
// it, or the lowest key of the bin where the search stopped, that bin holding exactly the rank
// needed (whole); `need` is the rank still needed at `key` (how many of its ties are among the top
// k, by index).
struct RankSelect {
  uint32_t key;
  int need;
  bool whole;
};
template <typename KeyOf>
__device__ __forceinline__ RankSelect rank_select(int V, int k, KeyOf key_of, Shared& sh) {
  const int t = static_cast<int>(threadIdx.x);
  RankSelect r{0u, k, false};
  for (int level = 0; level < 3; ++level) {
    histogram<false>(V, level, r.key, key_of, [](int) { return 0ull; }, Extra{}, sh);
    u64 mine = 0, total = 0;
    for (int e = 0; e < 8; ++e) mine += static_cast<u64>(sh.counts[8 * t + e]);
    const u64 suffix = block_suffix_sum(mine, sh, &total);
    crossing_digit([&](int i) { return static_cast<u64>(sh.counts[i]); }, static_cast<u64>(r.need), suffix, mine, sh);
    __syncthreads();
    const int d = sh.digit;
    r.need -= static_cast<int>(sh.above);
    const int in_bin = sh.counts[d];
    r.key |= static_cast<uint32_t>(d) << level_shift(level);
    __syncthreads();  // sh.digit, sh.above and the counts are rewritten by the next level
    if (in_bin == r.need) {
      r.whole = true;  // every token of the bin is kept
      break;
    }
  }
  return r;
}

// Top-k (0 < k < finite): kept, key ≥ the result.
__device__ __forceinline__ uint32_t top_k_key(const float* l, int V, int k, Shared& sh) {
  return rank_select(V, k, LogitKey{l, 0u}, sh).key;
}

// Top-p's cut: keep the finite tokens with key > key, and those with key == key, all of them
// unless rank_ties, then the first n by index.
struct Cut {
  uint32_t key;
  bool rank_ties;
  int n;
};

// The mass search of top-p, typical, top-H and arithmetic sampling: over the tokens key_of counts
// (masses mass_of, and `extra`), with target = target_of(total) from the level-0 total, the largest
// key t with mass(key ≥ t) ≥ target. `prefix` is t, or the lowest key of a bin holding one token
// (one_token: that token is the crossing one; `level` the digit level of that bin); `above` the
// mass of the keys above the prefix; `ties` the tokens in its bin. none: the target exceeds the
// total (or is 0).
struct MassSearch {
  uint32_t prefix;
  u64 target, above, ties, total;
  bool one_token, none;
  int level;
};
// ⌊total·fx / 2^32⌋ + add: a share fx / 2^32 of the mass (top-p, typical), past it (top-H: add 1).
struct MassShare {
  uint32_t fx;
  u64 add;
  __device__ __forceinline__ u64 operator()(u64 total) const { return mass_target(total, fx) + add; }
};
template <typename Target, typename KeyOf, typename MassOf>
__device__ __forceinline__ MassSearch mass_search(int V, Target target_of, KeyOf key_of, MassOf mass_of, const Extra& extra,
                                                  Shared& sh) {
  const int t = static_cast<int>(threadIdx.x);
  MassSearch r{0u, 0, 0, 0, 0, false, false, 0};
  for (int level = 0; level < 3; ++level) {
    histogram<true>(V, level, r.prefix, key_of, mass_of, extra, sh);
    u64 mine = 0, total = 0;
    for (int e = 0; e < 8; ++e) mine += sh.mass[8 * t + e];
    const u64 suffix = block_suffix_sum(mine, sh, &total);
    if (level == 0) {
      r.total = total;
      r.target = target_of(total);  // top-p, typical: < total, and ≥ 1 (the max's fx is 2^40)
      if (r.target > total || r.target == 0) {
        r.none = true;  // block-uniform: every thread has the same total
        return r;
      }
    }
    crossing_digit([&](int i) { return sh.mass[i]; }, r.target - r.above, suffix, mine, sh);
    __syncthreads();
    const int d = sh.digit;
    r.above += sh.above;
    r.ties = static_cast<u64>(sh.counts[d]);
    r.prefix |= static_cast<uint32_t>(d) << level_shift(level);
    r.level = level;
    __syncthreads();
    if (r.ties == 1) {
      r.one_token = true;
      return r;
    }
  }
  return r;
}

// Top-p (top_p_fx > 0) over the tokens with key ≥ floor_key (top-k's kept set; 0: every finite).
__device__ __forceinline__ Cut top_p_cut(const float* l, int V, uint32_t floor_key, float lmax, float inv_t,
                                         uint32_t top_p_fx, Shared& sh) {
  const MassSearch m = mass_search(
      V, MassShare{top_p_fx, 0}, LogitKey{l, floor_key}, [&](int x) { return fixed_mass(l[x], lmax, inv_t); }, Extra{}, sh);
  // The bin's one token is the crossing one; the bin may hold tokens below top-k's floor.
  if (m.one_token) return {max(m.prefix, floor_key), false, 1};
  // t* = prefix, `above` the mass of the keys above it; its ties have the same fx.
  const u64 fx = fixed_mass(key_value(m.prefix), lmax, inv_t);
  u64 n = m.ties;
  if (fx != 0) n = min(m.ties, (m.target - m.above + fx - 1) / fx);
  return {m.prefix, n > 0 && n < m.ties, static_cast<int>(n)};
}

// Whether a token of the chain's cut is kept by it outright (the ranked ties are counted apart).
__device__ __forceinline__ bool above_cut(const Cut& cut, uint32_t key) {
  return key >= cut.key && !(cut.rank_ties && key == cut.key);
}

// Z = Σ e and S = Σ e·(−d) over the kept set so far (the cut, then min-p) in 64-bit fixed point
// (per-thread sums, then shared atomics: integer sums, order-free), the ranked ties' share added
// once (they have one e). Every thread gets both.
struct Moments {
  u64 z, s;
};
__device__ __forceinline__ Moments kept_moments(const decoding::SamplerParams& s, const float* l, const Cut& cut, float lmax,
                                                Shared& sh) {
  const int tid = static_cast<int>(threadIdx.x);
  if (tid < 2) sh.mass[tid] = 0;
  __syncthreads();
  u64 z = 0, sd = 0;
  for (int x = tid; x < s.vocab; x += kThreads) {
    const float v = l[x];
    if (!(v > neg_inf()) || !above_cut(cut, order_key(v))) continue;
    const float d = log_weight(v, lmax, s.inv_temperature), e = expf(d);
    if (e < s.min_p) continue;
    z += to_fixed(e);
    sd += to_fixed(e > 0.0f ? e * -d : 0.0f);  // e = 0 at d = −inf: no NaN
  }
  if (z != 0) atomicAdd(&sh.mass[0], z);
  if (sd != 0) atomicAdd(&sh.mass[1], sd);
  __syncthreads();
  Moments m{sh.mass[0], sh.mass[1]};
  __syncthreads();  // mass is free again
  if (cut.rank_ties) {
    const float d = log_weight(key_value(cut.key), lmax, s.inv_temperature), e = expf(d);
    if (e >= s.min_p) {
      m.z += to_fixed(e) * static_cast<u64>(cut.n);
      m.s += to_fixed(e > 0.0f ? e * -d : 0.0f) * static_cast<u64>(cut.n);
    }
  }
  return m;
}

// The probability floor (s.cutoff > 0: epsilon, eta) as a floor on e = p / max p: floor = cutoff,
// or min(cutoff, √cutoff·exp(−H)) with H = ln Z + S/Z, times Z. Every thread computes it from the
// same integers.
__device__ __forceinline__ float probability_floor(const decoding::SamplerParams& s, const float* l, const Cut& cut, float lmax,
                                                   Shared& sh) {
  const Moments m = kept_moments(s, l, cut, lmax, sh);
  const float Z = from_fixed(m.z), S = from_fixed(m.s);
  float floor_p = s.cutoff;
  if (s.cutoff_entropy != 0) floor_p = fminf(floor_p, sqrtf(floor_p) * expf(-(logf(Z) + S / Z)));
  return floor_p * Z;
}

// Typical's key of a logit: larger for a smaller distance s = |d − c| from c, the mean of d under
// p (so s = |−ln p − H|): s ascending is key descending.
__device__ __forceinline__ uint32_t typical_key(float v, float lmax, float inv_t, float c) {
  return order_key(-fabsf(log_weight(v, lmax, inv_t) - c));
}

// Typical (s.typical_fx > 0) over the kept set so far: c = −S/Z, then the mass search over
// typical keys with target ⌊Z·typical_fx / 2^32⌋ (the level-0 total is Z), every tie kept. The
// ranked ties (one logit: one key, one e) go in as `extra`. Kept: typical key ≥ the result.
struct TypicalCut {
  uint32_t from;
  float c;
};
__device__ __forceinline__ TypicalCut typical_cut(const decoding::SamplerParams& s, const float* l, const Cut& cut, float lmax,
                                                  Shared& sh) {
  const float inv_t = s.inv_temperature;
  const Moments m = kept_moments(s, l, cut, lmax, sh);
  const float c = -(static_cast<float>(m.s) / static_cast<float>(m.z));
  Extra ties;
  if (cut.rank_ties) {
    const float v = key_value(cut.key), e = expf(log_weight(v, lmax, inv_t));
    if (e >= s.min_p) ties = {typical_key(v, lmax, inv_t, c), cut.n, to_fixed(e) * static_cast<u64>(cut.n)};
  }
  const auto key_of = [&](int x, uint32_t* key) {
    const float v = l[x];
    if (!(v > neg_inf()) || !above_cut(cut, order_key(v)) || expf(log_weight(v, lmax, inv_t)) < s.min_p) return false;
    *key = typical_key(v, lmax, inv_t, c);
    return true;
  };
  const MassSearch ms = mass_search(s.vocab, MassShare{s.typical_fx, 0}, key_of, [&](int x) { return fixed_mass(l[x], lmax, inv_t); }, ties, sh);
  return {ms.prefix, c};
}

// The shorter of two prefixes of the row in order of key descending (the smaller index first on
// ties), each a Cut: the one with the larger key; at one key, the fewer ties.
__device__ __forceinline__ Cut shorter_prefix(const Cut& a, const Cut& b) {
  if (a.key != b.key) return a.key > b.key ? a : b;
  if (!a.rank_ties) return b;
  if (!b.rank_ties) return a;
  return a.n < b.n ? a : b;
}

// Top-H (s.top_h_n > 0) over the kept set so far: L = ln Z from the moments and each token's
// weight w = e·(L − d) = Z·h in the fixed point of the masses; D = the first N kept tokens (a
// rank select of the N-th key, its ties ranked by index); the budget τ = ⌊Σ_D w·top_h_fx / 2^32⌋,
// and the mass search with target τ + 1 finds the first token whose w takes the running sum past
// τ: the tokens before it stay (at least the top one). The result is the kept prefix as a Cut.
__device__ __forceinline__ Cut top_h_cut(const decoding::SamplerParams& s, const float* l, const Cut& cut, float lmax, int finite,
                                         Shared& sh) {
  const float inv_t = s.inv_temperature;
  const float L = logf(from_fixed(kept_moments(s, l, cut, lmax, sh).z));
  const auto weight = [&](float v) {
    const float d = log_weight(v, lmax, inv_t), e = expf(d);
    return e > 0.0f ? to_fixed(e * (L - d)) : 0ull;  // e = 0 at d = −inf: no NaN
  };
  Cut domain = cut;
  if (s.top_h_n < finite) {
    const RankSelect n = rank_select(s.vocab, s.top_h_n, LogitKey{l, 0u}, sh);
    domain = shorter_prefix(cut, {n.key, !n.whole, n.need});
  }
  if (s.top_h_fx == 0) return domain;  // alpha = 1: all N
  Extra ties;
  if (domain.rank_ties) {
    const float v = key_value(domain.key);
    if (expf(log_weight(v, lmax, inv_t)) >= s.min_p) ties = {domain.key, domain.n, weight(v) * static_cast<u64>(domain.n)};
  }
  const auto key_of = [&](int x, uint32_t* key) {
    const float v = l[x];
    if (!(v > neg_inf())) return false;
    *key = order_key(v);
    return above_cut(domain, *key) && expf(log_weight(v, lmax, inv_t)) >= s.min_p;
  };
  const MassSearch ms = mass_search(s.vocab, MassShare{s.top_h_fx, 1}, key_of, [&](int x) { return weight(l[x]); }, ties, sh);
  if (ms.none) return domain;  // the budget holds all of D
  const uint32_t top = order_key(lmax);
  if (ms.one_token) {
    // The bin's one token of D is the crossing one: keep the keys above the bin, or the top token
    // alone when it is that one.
    const uint32_t end = ms.prefix + (1u << level_shift(ms.level));
    return top < end ? Cut{top, true, 1} : Cut{end, false, 0};
  }
  // t* = prefix, its ties of one weight: as many as fit under τ after the mass above them.
  const u64 w = weight(key_value(ms.prefix)), budget = ms.target - 1;
  u64 n = w != 0 ? (budget - ms.above) / w : ms.ties;
  n = min(n, ms.ties);
  if (n == 0 && ms.prefix == top) n = 1;
  return {ms.prefix, true, static_cast<int>(n)};
}

// The number of threads below this one whose flag is set, and the block's count in *total.
// Synchronises twice.
__device__ __forceinline__ int block_rank(bool flag, Shared& sh, int* total) {
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  const unsigned ballot = __ballot_sync(0xffffffffu, flag);
  if (lane == 0) sh.warp_i[warp] = __popc(ballot);
  __syncthreads();
  int before = __popc(ballot & ((1u << lane) - 1u)), sum = 0;
  for (int w = 0; w < kWarps; ++w) {
    before += w < warp ? sh.warp_i[w] : 0;
    sum += sh.warp_i[w];
  }
  *total = sum;
  __syncthreads();
  return before;
}

// The last pass: the kept mask of the row and the race over the kept tokens, token[0] the winner.
// Kept: finite, key ≥ cut.key (the first cut.n ties by index when cut.rank_ties), e ≥ min_p, and
// e ≥ floor_e (0: off) unless the logit is lmax, and a typical key ≥ typical->from (null: off).
// Warp w takes the 32-token tiles w, w + 8, ...: its ballot is the tile's mask word, and its
// lanes take the ≤ 9 Philox blocks the tile's elements row·V + x fall in (a block straddling two
// tiles is drawn by each that keeps a token of it), so each lane's tokens grow as race.cuh's
// consider() needs.
__device__ __forceinline__ void select_and_race(const float* l, int V, int64_t row, const Cut& cut, float min_p, float floor_e,
                                                const TypicalCut* typical, float lmax, float inv_t, const DevicePhilox& site, uint32_t* mask, int32_t* token,
                                                Shared& sh, bool race = true) {
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const uint64_t n0 = static_cast<uint64_t>(row) * static_cast<uint64_t>(V);
  race::Candidate best = race::none();
  int taken = 0;  // ties at cut.key in the tiles before this one
  for (int tile0 = 0; tile0 < V; tile0 += kThreads) {  // block-uniform: block_rank inside
    const int base = tile0 + 32 * warp, x = base + lane;
    const float v = x < V ? l[x] : neg_inf();
    const bool finite = v > neg_inf();
    const uint32_t key = finite ? order_key(v) : 0u;
    const float d = finite ? log_weight(v, lmax, inv_t) : neg_inf();
    bool keep = finite && key >= cut.key;
    if (cut.rank_ties) {
      const bool tie = finite && key == cut.key;
      int ties_here = 0;
      const int before = block_rank(tie, sh, &ties_here);
      if (tie && taken + before >= cut.n) keep = false;
      taken += ties_here;
    }
    if (keep && min_p > 0.0f) keep = expf(d) >= min_p;  // p / max p = e
    if (keep && floor_e > 0.0f && v != lmax) keep = expf(d) >= floor_e;
    if (keep && typical) keep = typical_key(v, lmax, inv_t, typical->c) >= typical->from;
    const unsigned word = __ballot_sync(0xffffffffu, keep);
    if (base >= V) continue;
    if (lane == 0) mask[base >> 5] = word;  // bits past V are 0: keep is false there
    if (word == 0 || !race) continue;       // warp-uniform: no kept token, no Philox block
    const int end = min(V, base + 32);
    const uint64_t first = (n0 + static_cast<uint64_t>(base)) >> 2, last = (n0 + static_cast<uint64_t>(end) - 1) >> 2;
    const uint64_t b = first + static_cast<uint64_t>(lane);
    const int xb = static_cast<int>(static_cast<int64_t>(4 * b) - static_cast<int64_t>(n0));
    float dv[4];
    bool kept[4], any = false;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int o = xb + e - base;  // the token's lane in this tile
      dv[e] = __shfl_sync(0xffffffffu, d, min(max(o, 0), 31));
      kept[e] = b <= last && o >= 0 && o < 32 && ((word >> (o & 31)) & 1u);
      any = any || kept[e];
    }
    if (!any) continue;
    const uint4 w4 = site.block(b);
    const uint32_t words[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (kept[e]) race::consider(best, dv[e], race::log_neg_log(words[e]), xb + e);
  }
  if (!race) return;
  race::group_merge(best, 0xffffffffu, 32);
  if (lane == 0) sh.best[warp] = best;
  __syncthreads();
  if (tid == 0) {
    race::Candidate c = sh.best[0];
    for (int w = 1; w < kWarps; ++w) race::merge(c, sh.best[w]);
    *token = race::winner(c);
  }
  __syncthreads();  // sh.best is free again
}

// A kept token's race key d − log(−log u) with the race's uniform (element n0 + x of the draw
// site), as an order key (Gumbel-top-k's rank select); false for a token the mask does not keep.
struct GumbelKey {
  const float* l;
  const uint32_t* mask;
  float lmax, inv_t;
  const DevicePhilox* site;
  uint64_t n0;
  __device__ __forceinline__ bool operator()(int x, uint32_t* key) const {
    if (!((mask[x >> 5] >> (x & 31)) & 1u)) return false;
    const uint64_t n = n0 + static_cast<uint64_t>(x);
    const uint4 b = site->block(n >> 2);
    const uint32_t w = (n & 3) == 0 ? b.x : ((n & 3) == 1 ? b.y : ((n & 3) == 2 ? b.z : b.w));
    *key = order_key(log_weight(l[x], lmax, inv_t) - race::log_neg_log(w));
    return true;
  }
};

// Gumbel-top-k (s.gumbel_k = k > 0) after the kept mask: the k largest race keys of the kept
// tokens by the rank select (each level recomputes the keys from their Philox words), the tokens
// above its key and the first `need` of its ties by index gathered in shared memory as
// key·2^32 + (2^32 − 1 − index), each one's place by counting the larger ones; −1 past the kept
// count. tokens[k]. Not inlined: inlined, the one sampling kernel spilled registers in every path.
ATTNBENCH_DEVICE_NOINLINE void gumbel_top_k(const decoding::SamplerParams& s, const float* l, int64_t row, float lmax,
                                             const DevicePhilox& site, const uint32_t* mask, int32_t* tokens, Shared& sh) {
  const int tid = static_cast<int>(threadIdx.x), k = s.gumbel_k, V = s.vocab;
  __syncthreads();  // the mask words the other warps wrote
  u64 kept = 0, n = 0;
  for (int w = tid; w < s.mask_words; w += kThreads) kept += static_cast<u64>(__popc(mask[w]));
  block_suffix_sum(kept, sh, &n);
  const GumbelKey key_of{l, mask, lmax, s.inv_temperature, &site, static_cast<uint64_t>(row) * static_cast<uint64_t>(V)};
  RankSelect sel{0u, 0, true};  // n ≤ k: every kept token
  if (n > static_cast<u64>(k)) sel = rank_select(V, k, key_of, sh);
  if (tid == 0) sh.counts[0] = 0;
  __syncthreads();
  int ties_taken = 0;
  for (int tile0 = 0; tile0 < V; tile0 += kThreads) {  // block-uniform: block_rank inside
    const int x = tile0 + tid;
    uint32_t key = 0;
    const bool kept_x = x < V && key_of(x, &key);
    bool take = kept_x && (sel.whole ? key >= sel.key : key > sel.key);
    if (!sel.whole) {
      const bool tie = kept_x && key == sel.key;
      int ties_here = 0;
      const int before = block_rank(tie, sh, &ties_here);
      take = take || (tie && ties_taken + before < sel.need);
      ties_taken += ties_here;
    }
    if (take) sh.mass[atomicAdd(&sh.counts[0], 1)] = static_cast<u64>(key) << 32 | (0xffffffffu - static_cast<uint32_t>(x));
  }
  __syncthreads();
  const int taken = sh.counts[0];  // min(k, n)
  for (int i = tid; i < k; i += kThreads) {
    if (i >= taken) {
      tokens[i] = -1;
      continue;
    }
    const u64 v = sh.mass[i];
    int place = 0;
    for (int j = 0; j < taken; ++j) place += sh.mass[j] > v;
    tokens[place] = static_cast<int32_t>(0xffffffffu - static_cast<uint32_t>(v));
  }
  __syncthreads();  // counts and mass are free again
}

// Arithmetic sampling's pick (s.arith_codes > 0) after the kept mask: the kept tokens' masses
// fx in token-id order (keys 2^32 − 1 − x, so key descending is index ascending) and the mass
// search with target floor(C·Z / 2^64) + 1 finds the token v where the running sum first exceeds
// the code's position; `above` is the mass before it. Thread 0 writes the token and the next code
// (arithmetic_common.h) to *code through shared memory; every thread returns with it.
ATTNBENCH_DEVICE_NOINLINE void arithmetic_pick(const decoding::SamplerParams& s, const float* l, float lmax, const uint32_t* mask,
                                               uint64_t* code, int32_t* token, Shared& sh) {
  const int tid = static_cast<int>(threadIdx.x), V = s.vocab;
  const float inv_t = s.inv_temperature;
  __syncthreads();  // the mask words the other warps wrote
  const uint64_t c = *code;
  const auto key_of = [&](int x, uint32_t* key) {
    *key = 0xffffffffu - static_cast<uint32_t>(x);
    return ((mask[x >> 5] >> (x & 31)) & 1u) != 0;
  };
  const auto mass_of = [&](int x) { return fixed_mass(l[x], lmax, inv_t); };
  const MassSearch ms = mass_search(
      V, [c](u64 total) { return static_cast<u64>(decoding::arithmetic_position(c, total)) + 1; }, key_of, mass_of, Extra{}, sh);
  // The crossing token: the one kept token of the search's last bin (its key range, as indices).
  const uint32_t width = 1u << level_shift(ms.level);
  const int64_t last = static_cast<int64_t>(0xffffffffu - ms.prefix);  // the bin's largest index
  const int hi = static_cast<int>(last < V - 1 ? last : V - 1);
  const int lo = static_cast<int>(last - static_cast<int64_t>(width - 1) > 0 ? last - static_cast<int64_t>(width - 1) : 0);
  int v = 0x7fffffff;
  for (int x = lo + tid; x <= hi; x += kThreads)
    if ((mask[x >> 5] >> (x & 31)) & 1u) v = min(v, x);
  for (int off = 16; off > 0; off >>= 1) v = min(v, __shfl_xor_sync(0xffffffffu, v, off));
  if ((tid & 31) == 0) sh.warp_i[tid >> 5] = v;
  __syncthreads();
  if (tid == 0) {
    for (int w = 1; w < kWarps; ++w) v = min(v, sh.warp_i[w]);
    v = min(v, sh.warp_i[0]);
    *token = v;
    sh.above = decoding::arithmetic_next(c, ms.total, ms.above, mass_of(v));
  }
  __syncthreads();
  *code = sh.above;
  __syncthreads();  // sh.above and warp_i are free again
}

// What the thresholds passes decide about a row: greedy (T = 0 or nothing finite) and its token,
// else the cut and the max the last pass needs.
struct RowPlan {
  bool greedy;
  int greedy_token;
  float lmax;
  Cut cut;
  float floor_e;  // the probability floor on e (0: off)
  TypicalCut typical;  // when s.typical_fx > 0
};

// A row's passes up to the last one (the max, top-k, top-p, the floor's sums). Every thread of
// the CTA calls it.
__device__ __forceinline__ RowPlan plan_row(const decoding::SamplerParams& s, const float* l, Shared& sh) {
  const int V = s.vocab;
  const RowStats st = row_stats(l, V, sh);
  if (s.temperature == 0.0f || st.finite == 0) return {true, st.finite > 0 ? st.first_max : 0, st.lmax, {0u, false, 0}, 0.0f, {0u, 0.0f}};
  uint32_t floor_key = 0;  // below every finite key
  if (s.top_k > 0 && s.top_k < st.finite) floor_key = top_k_key(l, V, s.top_k, sh);
  Cut cut{floor_key, false, 0};
  if (s.top_p < 1.0f) cut = top_p_cut(l, V, floor_key, st.lmax, s.inv_temperature, s.top_p_fx, sh);
  const float floor_e = s.cutoff > 0.0f ? probability_floor(s, l, cut, st.lmax, sh) : 0.0f;
  const TypicalCut typical = s.typical_fx > 0 ? typical_cut(s, l, cut, st.lmax, sh) : TypicalCut{0u, 0.0f};
  if (s.top_h_n > 0) cut = top_h_cut(s, l, cut, st.lmax, st.finite, sh);
  return {false, 0, st.lmax, cut, floor_e, typical};
}

// The last pass of a planned row: its kept mask [s.mask_words] and its token.
// With `code` (arithmetic sampling), the code picks the token and is carried out.
__device__ __forceinline__ void finish_row(const decoding::SamplerParams& s, const float* l, int64_t row, const RowPlan& plan,
                                           const DevicePhilox& site, uint32_t* mask, int32_t* token, Shared& sh,
                                           uint64_t* code = nullptr) {
  if (plan.greedy) {
    // The first maximum (token 0 when nothing is finite). T = 0 keeps it; a row with nothing
    // finite at T > 0 keeps nothing.
    const int g = plan.greedy_token;
    for (int w = static_cast<int>(threadIdx.x); w < s.mask_words; w += kThreads)
      mask[w] = s.temperature == 0.0f && w == g / 32 ? 1u << (g % 32) : 0u;
    if (s.gumbel_k == 0 && threadIdx.x == 0) *token = g;
    // Gumbel-top-k from the kept set: the argmax alone (T = 0), or nothing.
    for (int i = static_cast<int>(threadIdx.x); i < s.gumbel_k; i += kThreads)
      token[i] = s.temperature == 0.0f && i == 0 ? g : -1;
    return;
  }
  const bool gumbel = s.gumbel_k > 0, arithmetic = code != nullptr;
  select_and_race(l, s.vocab, row, plan.cut, s.min_p, plan.floor_e, s.typical_fx > 0 ? &plan.typical : nullptr, plan.lmax,
                  s.inv_temperature, site, mask, token, sh, !gumbel && !arithmetic);
  if (gumbel) gumbel_top_k(s, l, row, plan.lmax, site, mask, token, sh);
  if (arithmetic) arithmetic_pick(s, l, plan.lmax, mask, code, token, sh);
}

// One row through the standard chain (temperature, top-k, top-p, min-p), the probability floor
// when the method has one, and the race.
__device__ __forceinline__ void sample_row(const decoding::SamplerParams& s, const float* l, int64_t row,
                                           const DevicePhilox& site, uint32_t* mask, int32_t* token, Shared& sh,
                                           uint64_t* code = nullptr) {
  finish_row(s, l, row, plan_row(s, l, sh), site, mask, token, sh, code);
}

}  // namespace attnbench::cuda::sampler
