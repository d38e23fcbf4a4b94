// The decoding family's race stage on CUDA (semantics: reference/decoding/race.h): the pieces a
// kernel races a span of a row's tokens with, key_x = log w_x − log(−log u_x), u_x the fp32
// uniform of element n0 + x of the draw site's Philox stream:
//   walk_blocks   a group of `lanes` threads takes the span's whole Philox blocks in turn
//   consider      one token: its log-weight (−inf: no part) against the lane's candidate; a lane
//                 keeps its first best (only a strictly greater key replaces it, x only grows)
//   merge         two candidates: the larger key, then the smaller index
//   group_merge   over an aligned group of lanes by shuffles
//   winner        the emitted token: the best, else the smallest index with w > 0, else 0
// logf is CUDA's accurate one (1 ulp), never __logf: keys must stay within the SEMI band
// (check_semi.h) of the fp64 reference, like the CPU's.
#pragma once

#include <cstdint>

#include "../runtime/device_math.cuh"
#include "../runtime/philox.cuh"
#include "race_common.h"

namespace attnbench::cuda::race {

__device__ __forceinline__ Candidate none() { return {neg_inf(), -1, kNoToken}; }

// log(−log u) of a word's uniform: +inf at u = 0.
__device__ __forceinline__ float log_neg_log(uint32_t word) { return logf(-logf(DevicePhilox::uniform_of(word))); }

__device__ __forceinline__ void consider(Candidate& c, float log_w, float noise, int32_t x) {
  if (log_w > neg_inf() && c.first == kNoToken) c.first = x;
  const float key = log_w - noise;  // −inf for w = 0 or u = 0
  if (key > c.key) {
    c.key = key;
    c.index = x;
  }
}

// a becomes the better of (a, b): larger key, then smaller index; index −1 is no candidate.
__device__ __forceinline__ void keep_better(float& key, int32_t& index, float key2, int32_t index2) {
  if (index2 >= 0 && (index < 0 || key2 > key || (key2 == key && index2 < index))) {
    key = key2;
    index = index2;
  }
}
__device__ __forceinline__ void merge(Candidate& a, const Candidate& b) {
  keep_better(a.key, a.index, b.key, b.index);
  a.first = min(a.first, b.first);
}

// The lanes of this thread's aligned group of `lanes` (a power of two ≤ 32).
__device__ __forceinline__ unsigned group_mask(int lanes) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  return lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u) << (lane & ~(lanes - 1));
}
__device__ __forceinline__ void group_merge(Candidate& c, unsigned mask, int lanes) {
  for (int off = lanes >> 1; off > 0; off >>= 1) {
    Candidate o;
    o.key = __shfl_xor_sync(mask, c.key, off);
    o.index = __shfl_xor_sync(mask, c.index, off);
    o.first = __shfl_xor_sync(mask, c.first, off);
    merge(c, o);
  }
}

__device__ __forceinline__ int32_t winner(const Candidate& c) {
  return c.index >= 0 ? c.index : (c.first != kNoToken ? c.first : 0);
}

// Calls f(xb, words) for every Philox block of the stream holding an element n0 + x with x in
// [x0, x1), the group's lanes taking blocks in turn: word e of the block belongs to token xb + e,
// which may fall outside [x0, x1) in the first and last block.
template <typename F>
__device__ __forceinline__ void walk_blocks(const DevicePhilox& site, uint64_t n0, int x0, int x1, int lane, int lanes,
                                            F&& f) {
  const uint64_t first = (n0 + static_cast<uint64_t>(x0)) >> 2, last = (n0 + static_cast<uint64_t>(x1) - 1) >> 2;
  for (uint64_t b = first + static_cast<uint64_t>(lane); b <= last; b += static_cast<uint64_t>(lanes))
    f(static_cast<int64_t>(4 * b) - static_cast<int64_t>(n0), site.block(b));
}

}  // namespace attnbench::cuda::race
