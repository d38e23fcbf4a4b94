// What every backend's specdecpp needs to know about a case (semantics: specdecpp.cpp). Light on
// purpose: CUDA device code and the Vulkan shaders include it (the shaders read only the field
// list; C++ lives inside __cplusplus).
#ifndef ATTNBENCH_SPECDECPP_COMMON_H
#define ATTNBENCH_SPECDECPP_COMMON_H

#define ATTNBENCH_SPECDECPP_FIELDS(X)                                               \
  X(i32, batch)                                                                     \
  X(i32, max_drafts)  /* K_max = draft_len: the stride of every per-step tensor */  \
  X(i32, min_drafts)  /* K_min */                                                   \
  X(i32, hidden)      /* D: the draft's hidden size (linear head) */                \
  X(i32, vocab)       /* V */                                                       \
  X(i32, oracle)      /* 1: a_i = Σ min(p, q) at step i (the ideal head) */          \
  X(f32, threshold)   /* γ: stop once 1 − Π a > γ */

#ifdef __cplusplus
#include "attnbench/param_struct.h"
#include "speculative_sampling_common.h"

namespace attnbench {
struct Case;
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(SpecDecParams, ATTNBENCH_SPECDECPP_FIELDS);

SpecDecParams specdecpp_params(const Case& c);
// The chain verification's parameters (chain_verify.h): speculative_sampling's at draft_len = K_max.
SpeculativeParams specdecpp_chain_params(const Case& c);

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
