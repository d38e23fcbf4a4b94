// The passes of the decoding family's sampler stage on the CPU (sampler_stage.h says how they make
// the chain): each reads a row of logits once, computes z = l / T and e = exp(z − m) in fp32 eight
// or sixteen tokens at a time, and sorts tokens into buckets by the high bits of z's order key.
// Written once (sampler_kernel.inl) and compiled per ISA (runtime/isa.h).
#pragma once

#include <cstdint>
#include <cstring>

#include "../runtime/isa.h"

namespace attnbench::cpu::sampler {

// A bucket holds the tokens whose order key shares its top kBucketBits bits: the sign, the
// exponent and three bits of the mantissa of z, so a bucket spans at most 1/8 of a binade.
inline constexpr int kBucketBits = 12;
inline constexpr int kBuckets = 1 << kBucketBits;

// Larger z, larger key; −0 keys as +0 (they are equal values, and ties must stay ties).
inline uint32_t order_key(float z) {
  z += 0.0f;
  uint32_t b;
  std::memcpy(&b, &z, sizeof b);
  return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}
inline int32_t bucket_of(uint32_t key) { return static_cast<int32_t>(key >> (32 - kBucketBits)); }

// A token set aside for exact ordering: the few in the bucket where a threshold falls.
struct Token {
  int32_t index;
  uint32_t key;
  float z, e;
};

// What the last pass keeps outright, defers, or removes (the chain's thresholds as far as the
// buckets decide them). A finite token with key ≥ key_k (top-k) is kept when its bucket is above
// top_p_bucket and e ≥ min_e, deferred when its bucket is top_p_bucket; removed otherwise.
struct Cut {
  uint32_t key_k = 0;
  int32_t top_p_bucket = -1;  // −1: top-p decides nothing
  float min_e = 0;            // min-p on e = exp(z − m) = p / max p; 0: off
};

struct Kernels {
  // The largest finite logit of a row (−inf when none) and how many are finite.
  float (*row_max)(const float* l, int64_t V, int64_t* finite);
  // Counts of the finite tokens by bucket of z (adds to counts[kBuckets]).
  void (*count_buckets)(const float* l, int64_t V, float T, int32_t* counts);
  // Masses e by bucket (adds to mass[kBuckets], fp64) over the buckets ≥ low; the tokens of bucket
  // `gather` (−1: none) appended to out in index order. Returns how many it appended.
  int64_t (*mass_buckets)(const float* l, int64_t V, float T, float m, int32_t low, int32_t gather, double* mass,
                          Token* out);
  // The last pass: the mask words of the tokens kept outright (mask[ceil(V/32)]), log_w = z for
  // them and −inf for the others, the deferred tokens appended to out in index order. Returns how
  // many it deferred.
  int64_t (*select)(const float* l, int64_t V, float T, float m, const Cut& cut, float* log_w, uint32_t* mask,
                    Token* out);
  // A method's processor (sampler_stage.h): e = exp(log_w − m) of every token into e[V] (0 where
  // log_w is −inf, so 0 off the kept set), and Z = Σ e, S = Σ e·(m − log_w) over them, in fp64
  // and index order.
  void (*kept_moments)(const float* log_w, int64_t V, float m, float* e, double* z, double* s);
};

}  // namespace attnbench::cpu::sampler

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(sampler::Kernels);
}
