// sampling on CUDA (semantics: reference/decoding/sampling.cpp): the decoding family's sampler
// stage (sampler_stage.cuh) with no processor of its own, one CTA per row, the CTAs of the grid
// taking rows in turn; in distribution mode (one row of logits for every row) a CTA finds the
// thresholds once and reuses them for each of its rows.
#include "../runtime/launch.cuh"
#include "sampler_stage.cuh"
#include "sampling_launch.h"

namespace attnbench::cuda::sampling {
namespace {

__global__ void __launch_bounds__(sampler::kThreads) sampling_kernel(const Params p) {
  __shared__ sampler::Shared sh;
  const DevicePhilox site =
      DevicePhilox::make(static_cast<uint64_t>(p.s.seed_hi) << 32 | p.s.seed_lo, p.s.race_stream, p.domain);
  const int64_t per_row = p.s.gumbel_k > 0 ? p.s.gumbel_k : 1;  // tokens a row writes
  if (p.s.arith_codes > 0) {
    // Arithmetic sampling: a CTA takes a sequence through its steps in order (row t·S + q), its code
    // carried in every thread; in distribution mode every row reads one row of logits, planned once.
    const int64_t S = p.s.rows / p.s.arith_steps;
    const DevicePhilox offsets =
        DevicePhilox::make(static_cast<uint64_t>(p.s.seed_hi) << 32 | p.s.seed_lo, p.s.arith_stream, p.domain);
    const bool shared_row = p.s.prob_rows == 1;
    sampler::RowPlan plan{};
    if (shared_row) plan = sampler::plan_row(p.s, p.logits, sh);
    for (int64_t q = blockIdx.x; q < S; q += gridDim.x) {
      const uint64_t prompt = static_cast<uint64_t>(q / p.s.arith_codes);
      uint64_t code = (offsets.word(2 * prompt) | static_cast<uint64_t>(offsets.word(2 * prompt + 1)) << 32) +
                      decoding::arithmetic_lattice(q % p.s.arith_codes, p.s.arith_codes);
      for (int64_t t = 0; t < p.s.arith_steps; ++t) {
        const int64_t row = t * S + q;
        const float* l = p.logits + (shared_row ? 0 : row * p.s.vocab);
        sampler::finish_row(p.s, l, row, shared_row ? plan : sampler::plan_row(p.s, l, sh), site,
                            p.kept + row * p.s.mask_words, p.token + row, sh, &code);
      }
    }
    return;
  }
  if (p.s.prob_rows == 1) {
    // Every row reads row 0 (distribution mode): its thresholds are planned once per CTA, and each
    // row only selects and races with its own uniforms.
    const sampler::RowPlan plan = sampler::plan_row(p.s, p.logits, sh);
    for (int64_t row = blockIdx.x; row < p.s.rows; row += gridDim.x)
      sampler::finish_row(p.s, p.logits, row, plan, site, p.kept + row * p.s.mask_words, p.token + row * per_row, sh);
    return;
  }
  for (int64_t row = blockIdx.x; row < p.s.rows; row += gridDim.x)
    sampler::sample_row(p.s, p.logits + row * p.s.vocab, row, site, p.kept + row * p.s.mask_words, p.token + row * per_row, sh);
}

}  // namespace

cudaError_t launch(const Params& p, int64_t ctas, cudaStream_t stream) {
  return launch_kernel(sampling_kernel, dim3(static_cast<unsigned>(ctas)), dim3(sampler::kThreads), 0, stream, p);
}

}  // namespace attnbench::cuda::sampling
