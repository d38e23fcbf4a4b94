// The chain verification stage on Vulkan (chain_verify_stage.h).
#include "chain_verify_stage.h"

#include "attnbench/error.h"

namespace attnbench::vulkan {

std::string ChainVerifyStage::unsupported(const decoding::SpeculativeParams& s, const DeviceLimits& limits) {
  return speculative::plan_race(s, limits).unsupported;
}

void ChainVerifyStage::prepare(const decoding::SpeculativeParams& s, VulkanBackend& backend, const IoBuffers& io,
                               const Buffer* lengths) {
  be_ = &backend;
  plan_ = speculative::plan_race(s, be_->probe().limits);
  ATTNBENCH_ASSERT(plan_.unsupported.empty(), "prepare() of a case supports() refused: ", plan_.unsupported);
  span_best_ = be_->allocator().allocate(plan_.spans > 1 ? static_cast<size_t>(s.rows) * plan_.spans * 16 : 16,
                                         "chain_verify.span_best");
  const uint32_t with_lengths = lengths != nullptr ? 1u : 0u;
  const Pipeline& race =
      be_->pipeline("speculative_sampling_race", {plan_.threads, plan_.team, plan_.wide ? 1u : 0u, with_lengths}, 9);
  // Without lengths the shader never reads binding 8: draft_token_ids stands in.
  race_ = be_->bind(race, {&io["target_probs"], &io["draft_probs"], &io["draft_token_ids"], &io["tokens"], &io["emitted"],
                           &io["accepted_token_num"], &io["emitted_draft_token_num"], span_best_.get(),
                           lengths != nullptr ? lengths : &io["draft_token_ids"]});
  push_ = {s, {plan_.spans, plan_.span_len, static_cast<uint32_t>(plan_.race_groups)}};
  finalize_.reset();
  if (plan_.finalize_groups) {
    const Pipeline& fin = be_->pipeline("speculative_sampling_finalize", {plan_.finalize_threads, plan_.finalize_team}, 3);
    finalize_ = be_->bind(fin, {span_best_.get(), &io["emitted"], &io["tokens"]});
    finalize_push_ = {s, {plan_.spans, plan_.span_len, static_cast<uint32_t>(plan_.finalize_groups)}};
  }
}

void ChainVerifyStage::record() {
  be_->dispatch(*race_, push_, plan_.race_groups);
  if (finalize_) be_->dispatch(*finalize_, finalize_push_, plan_.finalize_groups);
}

}  // namespace attnbench::vulkan
