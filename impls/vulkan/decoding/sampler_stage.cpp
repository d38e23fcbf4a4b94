#include "sampler_stage.h"

#include <algorithm>

#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan {

namespace {
constexpr size_t kCutBytes = 40;  // sampler_stage.glsl's SamplerCut
}  // namespace

SamplerPlan plan_sampler(const decoding::SamplerParams& s, const DeviceLimits& limits) {
  const DeviceView d(limits);
  SamplerPlan p;
  p.unsupported = missing_feature(limits, {"subgroup_basic", "subgroup_arithmetic", "subgroup_shuffle"}, "the sampler stage");
  if (!p.unsupported.empty()) return p;
  const uint64_t R = static_cast<uint64_t>(s.rows), V = static_cast<uint64_t>(s.vocab);
  p.unsupported = over_binding({{"logits", static_cast<uint64_t>(s.prob_rows) * V * 4, 4},
                                {"kept", R * static_cast<uint64_t>(s.mask_words) * 4, 4},
                                {"the tokens", R * static_cast<uint64_t>(std::max(s.gumbel_k, 1)) * 4, 4},
                                {"the cuts", static_cast<uint64_t>(s.prob_rows) * kCutBytes, 4}},
                               d);
  if (!p.unsupported.empty()) return p;
  p.threads = d.workgroup(256);
  if (p.threads % 32 != 0 || ATTNBENCH_SAMPLER_DIGITS % p.threads != 0)
    return {cat("a workgroup of ", p.threads, " lanes: the sampler stage needs a multiple of 32 that divides ",
                ATTNBENCH_SAMPLER_DIGITS)};
  // The bins (count and mass), the lanes' partial sums, the team reductions' words, mask words.
  const uint64_t shared = 4ull * (3 * ATTNBENCH_SAMPLER_DIGITS + 5 * p.threads + p.threads / 32 + 5);
  if (shared > d.shared)
    return {cat("the sampler stage needs ", shared, " bytes of shared memory, over this device's ", d.shared)};
  p.finish_threads = d.workgroup(std::min<uint32_t>(p.threads, pow2_ceil(static_cast<uint32_t>(V))));
  if (p.finish_threads % 32 != 0) p.finish_threads = p.threads;
  return p;
}

Support SamplerStage::supports(const Case& c, const DeviceLimits& limits) const {
  const SamplerPlan p = plan_sampler(decoding::sampler_params(c), limits);
  return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
}

void SamplerStage::prepare(const Case& c, Backend& backend, const IoBuffers& io) {
  be_ = &as_vulkan(backend);
  params_ = decoding::sampler_params(c);
  plan_ = plan_sampler(params_, be_->probe().limits);
  ATTNBENCH_ASSERT(plan_.unsupported.empty(), "prepare() of a case supports() refused: ", plan_.unsupported);
  cuts_ = be_->allocator().allocate(static_cast<size_t>(params_.prob_rows) * kCutBytes, "sampler.cuts");
  const std::vector<const Buffer*> buffers{&io["logits"], &io["kept"], &io[params_.gumbel_k > 0 ? "tokens" : "token"], cuts_.get()};
  thresholds_ = be_->bind(be_->pipeline(shader_, {plan_.threads, 0}, 4), buffers);
  finish_ = be_->bind(be_->pipeline(shader_, {plan_.finish_threads, 1}, 4), buffers);
}

void SamplerStage::run() {
  be_->dispatch(*thresholds_, params_, static_cast<uint64_t>(params_.prob_rows));
  // Arithmetic sampling's finish takes a sequence (its steps in order) per workgroup.
  const int32_t units = params_.arith_codes > 0 ? params_.rows / params_.arith_steps : params_.rows;
  be_->dispatch(*finish_, params_, static_cast<uint64_t>(units));
}

}  // namespace attnbench::vulkan
