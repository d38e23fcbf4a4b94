// The decoding family's race stage on the CPU (semantics: reference/decoding/race.h): over a span
// of tokens, key_x = log w_x − log(−log u_x), u_x the fp32 Philox uniform of element
// first_element + x; the best key, the smallest index on ties. The weights are probabilities p,
// a residual max(0, p − q) (speculative sampling), or log-weights directly (a sampler's processed
// logits, −inf for a removed token). Uniforms come from a vectorised Philox4x32-10, bit-identical
// to harness/src/rng.cpp. Written once (race_kernel.inl) and compiled per ISA (runtime/isa.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "../runtime/isa.h"

namespace attnbench::cpu::race {

struct RaceBest {
  float key;               // −inf when no token of the span has a finite key
  int32_t index;           // −1 then
  int32_t first_positive;  // smallest x of the span with w_x > 0, −1 when none
};

// What the race weighs each token of a span by (x indexes all three).
struct Weights {
  const float* p = nullptr;      // probabilities (when log_w is null)
  const float* q = nullptr;      // with p: the residual max(0, p − q)
  const float* log_w = nullptr;  // log-weights, −inf for a token that takes no part
};

struct PhiloxSite {
  uint32_t k0, k1, stream, domain;
};

// Scratch words a span of n tokens needs.
inline size_t race_scratch_words(int64_t n) { return static_cast<size_t>(n + 4 + 4 * 16); }

struct Kernels {
  // Tokens [x0, x1) of the weights.
  RaceBest (*race)(const Weights& w, int64_t x0, int64_t x1, const PhiloxSite& site, uint64_t first_element,
                   uint32_t* scratch);
  // Every token's key log_w − log(−log u) into out[V] (−inf where log_w is −inf; u = 0 gives −inf
  // too): the race's keys, for a draw of several tokens (gumbel_topk). scratch as race()'s for V.
  void (*log_keys)(const float* log_w, int64_t V, const PhiloxSite& site, uint64_t first_element, uint32_t* scratch,
                   float* out);
};

// The best of a row's spans (larger key, then smaller index); a race whose keys are all −inf goes
// to the smallest index with w > 0, one with no candidate to token 0.
int32_t race_winner(const RaceBest* spans, int64_t n);

}  // namespace attnbench::cpu::race

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(race::Kernels);
}
