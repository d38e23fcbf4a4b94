// speculative_sampling on Vulkan (variant "race"): verification entirely on the device.
// speculative_sampling_race does, per row, the K acceptance tests, the counters and the
// exponential race at the stop position (residual after a rejection, p_K for the bonus, the
// all-zero fallback), with the spec's Philox uniforms; when the vocabulary is raced in several
// spans, speculative_sampling_finalize picks each row's winner (speculative_sampling_plan.h).
#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "speculative_sampling_plan.h"

namespace attnbench::vulkan {
namespace {

class VulkanSpeculativeSampling final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const speculative::Plan p = speculative::plan_race(decoding::speculative_params(c), limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    const decoding::SpeculativeParams s = decoding::speculative_params(c);
    plan_ = speculative::plan_race(s, be_->probe().limits);
    ATTNBENCH_ASSERT(plan_.unsupported.empty(), "prepare() of a case supports() refused: ", plan_.unsupported);
    span_best_ = be_->allocator().allocate(plan_.spans > 1 ? static_cast<size_t>(s.rows) * plan_.spans * 16 : 16,
                                           "speculative_sampling.span_best");
    const Pipeline& race = be_->pipeline("speculative_sampling_race", {plan_.threads, plan_.team, plan_.wide ? 1u : 0u}, 8);
    race_ = be_->bind(race, {&io["target_probs"], &io["draft_probs"], &io["draft_token_ids"], &io["tokens"], &io["emitted"],
                             &io["accepted_token_num"], &io["emitted_draft_token_num"], span_best_.get()});
    push_ = {s, {plan_.spans, plan_.span_len, static_cast<uint32_t>(plan_.race_groups)}};
    if (plan_.finalize_groups) {
      const Pipeline& fin = be_->pipeline("speculative_sampling_finalize", {plan_.finalize_threads, plan_.finalize_team}, 3);
      finalize_ = be_->bind(fin, {span_best_.get(), &io["emitted"], &io["tokens"]});
      finalize_push_ = {s, {plan_.spans, plan_.span_len, static_cast<uint32_t>(plan_.finalize_groups)}};
    }
  }

  void run() override {
    be_->dispatch(*race_, push_, plan_.race_groups);
    if (finalize_) be_->dispatch(*finalize_, finalize_push_, plan_.finalize_groups);
  }

 private:
  VulkanBackend* be_ = nullptr;
  speculative::Plan plan_;
  BufferPtr span_best_;
  std::unique_ptr<BoundPipeline> race_, finalize_;
  speculative::Push push_{}, finalize_push_{};
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSpeculativeSampling, "speculative_sampling", "vulkan", "race");
