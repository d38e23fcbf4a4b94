// The exponential race of speculative_sampling on the CPU (semantics: reference/decoding/
// speculative_sampling.cpp): over a span of tokens, key_x = log w_x − log(−log u_x) with w = p
// (bonus, fallback) or max(0, p − q) (residual) and u_x the fp32 Philox uniform of element
// first_element + x; the best key, the smallest index on ties. Uniforms come from a vectorised
// Philox4x32-10, bit-identical to harness/src/rng.cpp. Written once (race_kernel.inl) and compiled
// for AVX2 and AVX-512; speculative_sampling_cpu.cpp dispatches at run time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../runtime/isa.h"

namespace attnbench::cpu::spec {

struct RaceBest {
  float key;               // −inf when no token of the span has a finite key
  int32_t index;           // −1 then
  int32_t first_positive;  // smallest x of the span with w_x > 0, −1 when none
};

struct PhiloxSite {
  uint32_t k0, k1, stream, domain;
};

// Scratch words a span of n tokens needs.
inline size_t race_scratch_words(int64_t n) { return static_cast<size_t>(n + 4 + 4 * 16); }

struct RaceKernels {
  int vector_width;
  // Tokens [x0, x1) of p (and q when not null).
  RaceBest (*race)(const float* p, const float* q, int64_t x0, int64_t x1, const PhiloxSite& site, uint64_t first_element,
                   uint32_t* scratch);
};

}  // namespace attnbench::cpu::spec

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(spec::RaceKernels);
}
