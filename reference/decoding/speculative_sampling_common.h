// What every backend's speculative_sampling needs to know about a case: shapes, the draw sites and
// the index of each draw (semantics: speculative_sampling.cpp's header). Light on purpose.
#pragma once

#include <cstdint>

#include "attnbench/caseid.h"

namespace attnbench::decoding {

// Draw sites (rng.h: PhiloxStream(seed, site, kDomainDraws), fp32 uniform of element n).
inline constexpr const char* kAcceptSite = "spec.accept";  // n = row·K + i
inline constexpr const char* kRaceSite = "spec.race";      // n = (row·(K+1) + position)·V + token

struct SpecShape {
  int64_t rows;        // batch, or draws in distribution mode
  int64_t prob_rows;   // rows of the probability tensors: batch, or 1 (broadcast) in distribution mode
  int64_t draft_len;   // K
  int64_t vocab;       // V
  bool distribution;   // draws > 0: every row reads probability row 0
  int64_t prob_row(int64_t row) const { return distribution ? 0 : row; }
  uint64_t accept_index(int64_t row, int64_t i) const { return static_cast<uint64_t>(row * draft_len + i); }
  uint64_t race_index(int64_t row, int64_t position, int64_t token) const {
    return static_cast<uint64_t>((row * (draft_len + 1) + position) * vocab + token);
  }
};

SpecShape spec_shape(const Case& c);

}  // namespace attnbench::decoding
