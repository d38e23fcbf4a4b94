// What every backend's speculative_sampling needs to know about a case: its parameters, the draw
// sites and the index of each draw (semantics: speculative_sampling.cpp's header). Light on
// purpose: CUDA device code and the Vulkan shaders include it (the shaders read only the field
// list; C++ lives inside __cplusplus).
#ifndef ATTNBENCH_SPECULATIVE_SAMPLING_COMMON_H
#define ATTNBENCH_SPECULATIVE_SAMPLING_COMMON_H

#define ATTNBENCH_SPECULATIVE_FIELDS(X)                                                      \
  X(i32, rows)          /* R: batch, or draws in distribution mode */                \
  X(i32, prob_rows)     /* rows of the probability tensors: batch, or 1 (broadcast) */ \
  X(i32, draft_len)     /* K */                                                       \
  X(i32, vocab)         /* V */                                                       \
  X(i32, distribution)  /* 1: every row reads probability row 0 */                   \
  X(u32, seed_lo)       /* the case seed: the Philox key */                           \
  X(u32, seed_hi)                                                                     \
  X(u32, accept_stream) /* FNV-1a of "spec.accept" */                                 \
  X(u32, race_stream)   /* FNV-1a of "spec.race" */

#ifdef __cplusplus
#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(SpeculativeParams, ATTNBENCH_SPECULATIVE_FIELDS);

// Draw sites (rng.h: PhiloxStream(seed, site, kDomainDraws), fp32 uniform of element n).
inline constexpr const char* kAcceptSite = "spec.accept";  // n = row·K + i
inline constexpr const char* kRaceSite = "spec.race";      // n = (row·(K+1) + position)·V + token

SpeculativeParams speculative_params(const Case& c);

ATTNBENCH_HD inline int64_t prob_row_of(const SpeculativeParams& s, int64_t row) { return s.distribution ? 0 : row; }
ATTNBENCH_HD inline uint64_t accept_index(const SpeculativeParams& s, int64_t row, int64_t i) {
  return static_cast<uint64_t>(row * s.draft_len + i);
}
ATTNBENCH_HD inline uint64_t race_index(const SpeculativeParams& s, int64_t row, int64_t position, int64_t token) {
  return static_cast<uint64_t>((row * (s.draft_len + 1) + position) * s.vocab + token);
}

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
