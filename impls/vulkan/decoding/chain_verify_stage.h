// The decoding family's chain verification stage on Vulkan (semantics: reference/decoding/
// chain_verify.h): speculative_sampling's impl is this stage, and specdecpp's verification after
// its stopping rule (each row verifies lengths[r] drafts, read on the device). The kernels and
// their shapes: shaders/speculative_sampling_race.comp, _finalize.comp, speculative_sampling_plan.h.
#pragma once

#include <memory>
#include <string>

#include "../runtime/vulkan_backend.h"
#include "attnbench/impl.h"
#include "reference/decoding/speculative_sampling_common.h"
#include "speculative_sampling_plan.h"

namespace attnbench::vulkan {

class ChainVerifyStage {
 public:
  // Why the stage cannot run the case on this device ("" if it can).
  static std::string unsupported(const decoding::SpeculativeParams& s, const DeviceLimits& limits);

  // Binds target_probs, draft_probs, draft_token_ids and the four outputs of `io`; `lengths`: an
  // i32 buffer of each row's drafts (≤ draft_len), or null for draft_len everywhere.
  void prepare(const decoding::SpeculativeParams& s, VulkanBackend& backend, const IoBuffers& io,
               const Buffer* lengths);
  // Records the stage's dispatches, after whatever wrote `lengths` (the stream's barriers).
  void record();

 private:
  VulkanBackend* be_ = nullptr;
  speculative::Plan plan_;
  BufferPtr span_best_;
  std::unique_ptr<BoundPipeline> race_, finalize_;
  speculative::Push push_{}, finalize_push_{};
};

}  // namespace attnbench::vulkan
