// What every backend's frspec needs to know about a case (semantics: frspec.cpp's header): the
// parameter struct its draft-head kernels read, one field list for C++, CUDA and GLSL (C++ lives
// inside __cplusplus), and the index of each draw. The verification after the draft head is
// speculative_sampling's stage, run with that method's own parameters.
#ifndef ATTNBENCH_FRSPEC_COMMON_H
#define ATTNBENCH_FRSPEC_COMMON_H

#define ATTNBENCH_FRSPEC_FIELDS(X)                                                            \
  X(i32, rows)            /* R: batch, or draws in distribution mode */                      \
  X(i32, prob_rows)       /* P: chains of hidden states and targets (batch, or 1) */         \
  X(i32, draft_len)       /* K */                                                             \
  X(i32, vocab)           /* V: the target's vocabulary */                                    \
  X(i32, subset)          /* V': the drafting vocabulary, the V' most frequent tokens */     \
  X(i32, hidden)          /* D: the draft model's hidden size */                              \
  X(i32, distribution)    /* 1: every row reads chain 0 */                                    \
  X(i32, greedy)          /* 1: temperature 0, the draft is the argmax over the subset */    \
  X(f32, inv_temperature) /* 1/T from fp64, one rounding (0 when greedy) */                   \
  X(u32, seed_lo)         /* the case seed: the Philox key */                                 \
  X(u32, seed_hi)                                                                             \
  X(u32, draft_stream)    /* FNV-1a of "frspec.draft" */

#ifdef __cplusplus
#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;  // attnbench/caseid.h
}

namespace attnbench::decoding {

ATTNBENCH_PARAM_STRUCT(FrspecParams, ATTNBENCH_FRSPEC_FIELDS);

// The draft's draw site (rng.h: PhiloxStream(seed, site, kDomainDraws), fp32 uniform of element n):
// the race over the subset at draft position t of row r, n = (r·K + t)·V' + j for subset entry j.
inline constexpr const char* kFrspecDraftSite = "frspec.draft";

FrspecParams frspec_params(const Case& c);
// The verification stage's case: speculative_sampling over the same rows, draft length and
// vocabulary, with the same seed (so the same acceptance and race draws). Its inputs are
// target_probs, draft_probs [chains, K, V] (q on the subset, 0 elsewhere) and draft_token_ids.
Case frspec_verification_case(const Case& c);

// The head's rows: hidden state and logits row h = chain·K + t (chain = the row, or 0).
ATTNBENCH_HD inline int64_t frspec_chain_of(const FrspecParams& s, int64_t row) { return s.distribution ? 0 : row; }
ATTNBENCH_HD inline uint64_t frspec_draft_index(const FrspecParams& s, int64_t row, int64_t t, int64_t j) {
  return static_cast<uint64_t>((row * s.draft_len + t) * s.subset + j);
}

}  // namespace attnbench::decoding
#endif  // __cplusplus
#endif
