// The decoding family's sampler stage on the CPU (contract: reference/decoding/sampler.h): a row
// of fp32 logits through the standard chain (temperature, top-k, top-p, min-p) to its kept mask,
// then one token by the race over the kept tokens. A sampling method's CPU impl is this stage.
//
// No sort of the row. Three passes over the logits (sampler_kernel.h), each in fp32:
//   1. the row's max (and, with top-k, counts of z by bucket: 4096 buckets on the high bits of
//      z's order key). Top-k's threshold falls in the bucket where the count from the top reaches k;
//   2. e = exp(z − m) summed by bucket in fp64, and the tokens of top-k's bucket gathered: the
//      k-th largest key among them (nth_element) is the threshold, and the mass the top-k set
//      keeps is exact. Top-p's threshold falls in the bucket where the mass from the top reaches
//      top_p times that;
//   3. every token kept outright (above both buckets, e ≥ min_p) gets its mask bit and its z as
//      the race's log-weight; the tokens of top-p's bucket are gathered, ordered (z descending, the
//      smaller index first) and kept while the mass before them is below top_p times the total.
// A method's probability floor (epsilon, eta: SamplerParams::cutoff) then walks the kept tokens
// once more after a vectorised pass that computes every kept token's e and the moments Z = Σ e,
// S = Σ e·(−d) (apply_floor); typical's search (typical_fx) walks them three times after that pass
// (apply_typical: masses by bucket of the distance from the entropy, the crossing bucket's tokens,
// the cut); top-H's budget walks them once after that pass (apply_top_h: a heap of the top N by
// the logit's key) and rewrites the mask from the few it keeps. The race then runs over the kept log-weights: a nucleus token by token, each with its own
// Philox word; a large kept set through the race stage (race_kernel.h), which draws every token's
// uniform eight or sixteen at a time. Gumbel-top-k (gumbel_k > 0) takes the k best keys of the
// same race instead of the best (draw_without_replacement). Greedy rows (T = 0) take the first
// maximum in one pass. Arithmetic sampling (arith_codes > 0) runs a sequence's rows step by step,
// its code picking each step's token by the inverse CDF of the kept masses in token-id order
// (arithmetic_pick), sequences in parallel.
// Bytes: the logits read three times (the count pass only with top-k), the log-weights written and
// read once, the mask written once. Measured (ci/anchors/torch_sampling.py) at a few percent of the
// copy-bandwidth floor: the passes' per-token bucket work and the race's per-token Philox dominate,
// not the reads.
#pragma once

#include <cstdint>
#include <vector>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "attnbench/rng.h"
#include "race_kernel.h"
#include "reference/decoding/sampler_common.h"
#include "sampler_kernel.h"

namespace attnbench::cpu {

class SamplerStage {
 public:
  // Binds the case's logits, kept and token buffers; scratch per pool slot.
  void prepare(const Case& c, Backend& backend, const IoBuffers& io);
  void run();

 private:
  struct Scratch;
  // Row r through the chain, then its draw: the race, Gumbel-top-k, or with a code arithmetic
  // sampling's pick (the code carried to the sequence's next step).
  void run_row(int64_t r, Scratch& s, uint64_t* code) const;
  int32_t arithmetic_pick(float m, Scratch& s, uint64_t* code) const;
  void apply_floor(const float* l, float m, float lmax, uint32_t* mask, float* log_w, float* e) const;
  void apply_typical(float m, uint32_t* mask, float* log_w, Scratch& s) const;
  void apply_top_h(const float* l, float m, uint32_t* mask, float* log_w, Scratch& s) const;
  void draw_without_replacement(int64_t r, bool many, Scratch& s) const;

  ThreadPool* pool_ = nullptr;
  const sampler::Kernels* kernels_ = nullptr;
  const race::Kernels* race_ = nullptr;
  decoding::SamplerParams p_{};
  race::PhiloxSite site_{};
  PhiloxStream draws_{0, 0u, 0u};
  PhiloxStream offsets_{0, 0u, 0u};  // arithmetic sampling's code offsets
  const float* logits_ = nullptr;
  uint32_t* kept_ = nullptr;
  int32_t* token_ = nullptr;  // [rows], or [rows, gumbel_k] (gumbel_topk's tokens)
  std::vector<BufferPtr> scratch_;
};

// A sampling method's CPU impl: the stage, registered under the method's name (its processor
// comes from the case through SamplerParams), rows in parallel on the backend's pool.
class SamplerImpl final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    if (c.i64("vocab") >= (int64_t{1} << 24)) return Support::no("race indices are tracked in fp32 lanes: vocab < 2^24");
    return Support::yes();
  }
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override { stage_.prepare(c, backend, io); }
  void run() override { stage_.run(); }

 private:
  SamplerStage stage_;
};

}  // namespace attnbench::cpu
