// penalties' parameter struct (reference/decoding/penalties.cpp): one field list for C++, CUDA and
// GLSL (C++ lives inside __cplusplus), as sampler_common.h.
#ifndef ATTNBENCH_PENALTIES_COMMON_H
#define ATTNBENCH_PENALTIES_COMMON_H

#define ATTNBENCH_PENALTIES_FIELDS(X)                                              \
  X(i32, batch)                                                                    \
  X(i32, vocab)                                                                    \
  X(i32, history)     /* tokens of history per row */                             \
  X(f32, repetition)  /* θ: z/θ where z > 0, z·θ elsewhere, for a token seen (1: off) */ \
  X(f32, frequency)   /* α_f: minus α_f·count */                                   \
  X(f32, presence)    /* α_p: minus α_p for a token seen */

#ifdef __cplusplus
#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(PenaltiesParams, ATTNBENCH_PENALTIES_FIELDS);

PenaltiesParams penalties_params(const Case& c);

// The penalised logit of a token seen `count` times, in fp32 in the order every backend uses
// (the reference's same-precision baseline): the repetition penalty, then the frequency and the
// presence penalty, each one rounding.
ATTNBENCH_HD inline float penalised(const PenaltiesParams& p, float z, int count) {
  if (count == 0) return z;
  float r = z > 0.0f ? z / p.repetition : z * p.repetition;
  r = r - p.frequency * static_cast<float>(count);
  return r - p.presence;
}

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
