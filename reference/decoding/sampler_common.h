// What a backend's sampler stage needs to know about a case (the contract: sampler.h): the
// parameter struct the backends' sampler stages read (the CPU's: impls/cpu/decoding/sampler_stage.h),
// one field list for C++, CUDA and GLSL (C++ lives inside __cplusplus). The reference reads only
// the shape fields (rows, prob_rows, vocab, mask_words) and takes the chain from the case in fp64.
// Past the standard chain the stages run the processors a method turns on here (its
// Sampler::stage_params): the probability floor of epsilon and eta sampling, typical sampling's
// search and top-H's entropy budget (a method turns on one of them).
#ifndef ATTNBENCH_SAMPLER_COMMON_H
#define ATTNBENCH_SAMPLER_COMMON_H

#define ATTNBENCH_SAMPLER_FIELDS(X)                                                      \
  X(i32, rows)        /* sampled rows: batch, or draws in distribution mode */           \
  X(i32, prob_rows)   /* rows of logits: batch, or 1 (every row reads row 0) */         \
  X(i32, vocab)                                                                          \
  X(i32, mask_words)  /* 32-bit words of a row's kept mask: ceil(vocab / 32) */         \
  X(f32, temperature) /* 0: greedy */                                                    \
  X(f32, inv_temperature) /* 1/T from fp64, one rounding (0 when T = 0) */                \
  X(i32, top_k)       /* 0: off */                                                       \
  X(f32, top_p)       /* 1: off */                                                       \
  X(u32, top_p_fx)    /* floor(top_p * 2^32) when top_p < 1 (device stages), else 0 */   \
  X(f32, min_p)       /* 0: off */                                                       \
  X(f32, cutoff)      /* a method's probability floor: keep p ≥ it, the max kept (0: off) */ \
  X(i32, cutoff_entropy) /* 1: the floor is min(cutoff, √cutoff·exp(−H)), H the entropy */    \
  X(u32, typical_fx)  /* typical's mass as floor(mass·2^32) (0: off) */                     \
  X(i32, top_h_n)     /* top-H's N: the budget's and the kept set's bound (0: off) */        \
  X(u32, top_h_fx)    /* top-H's alpha as floor(alpha·2^32); 0 for alpha = 1 (all N kept) */ \
  X(i32, gumbel_k)    /* gumbel_topk: the finish draws this many distinct tokens (0: one) */ \
  X(i32, arith_codes) /* arithmetic_sampling: codes per prompt (0: off); rows = steps·S */    \
  X(i32, arith_steps) /* its steps; row t·S + s is sequence s at step t */                 \
  X(u32, arith_stream) /* its offsets' draw site, "arith.offset" (two words per prompt) */   \
  X(u32, seed_lo)     /* the case seed: the Philox key */                                \
  X(u32, seed_hi)                                                                        \
  X(u32, race_stream) /* FNV-1a of the race's draw site */

// The device sampler stage (Vulkan and CUDA; docs/design.md "The device sampler stage"): radix
// select on the order keys of the logits in three digits, high to low, and masses as unsigned
// 64-bit fixed point, floor(e * 2^40) per token, so every sum is exact and order-free.
#define ATTNBENCH_SAMPLER_DIGIT_BITS 11 /* digits of 11, 11 and 10 bits */
#define ATTNBENCH_SAMPLER_DIGITS 2048
#define ATTNBENCH_SAMPLER_MASS_FRAC_BITS 40

#ifdef __cplusplus
#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(SamplerParams, ATTNBENCH_SAMPLER_FIELDS);

// The race's draw site: U("sample.race", row * vocab + token).
inline constexpr const char* kSampleRaceSite = "sample.race";

SamplerParams sampler_params(const Case& c);

ATTNBENCH_HD inline int64_t logits_row_of(const SamplerParams& s, int64_t row) { return s.prob_rows == 1 ? 0 : row; }

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
