// The exponential race, the decoding family's one categorical draw (every backend has a stage for
// it: impls/cpu/decoding/race_kernel.*, impls/cuda/decoding/race.cuh, impls/vulkan/shaders/
// race.glsl): among the tokens with weight w_x > 0, the winner is
//   argmax_x (log w_x − log(−log u_x)),   u_x = U(site, first + x) = (word >> 8)·2^-24
// with one fp32 uniform per token (rng.h, the draws' domain), no normalisation and no prefix sum.
// Ties go to the smaller index; a race whose keys are all −inf (u = 0 for every candidate) goes
// to the smallest index with w > 0; a race with no candidate gives token 0.
// A sampler races over log-weights directly (its processed logits: log w up to a constant, which
// does not change the winner); speculative sampling over probabilities and residuals.
#pragma once

#include <cstdint>
#include <vector>

#include "attnbench/rng.h"

namespace attnbench::decoding {

struct RaceResult {
  int64_t token = 0;
  double gap = 0;  // (k1 − k2)/max(1, |k1|, |k2|) of the top two fp64 keys: the SEMI check's margin
};

// Over log-weights: −inf marks a token that takes no part. `words` is scratch.
RaceResult race_log_weights(const PhiloxStream& draws, uint64_t first, const std::vector<double>& log_w,
                            std::vector<uint32_t>& words);
// Over weights w ≥ 0 (log w computed here).
RaceResult race_weights(const PhiloxStream& draws, uint64_t first, const std::vector<double>& w,
                        std::vector<uint32_t>& words);

}  // namespace attnbench::decoding
