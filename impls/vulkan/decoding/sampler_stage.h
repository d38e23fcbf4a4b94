// The decoding family's sampler stage on Vulkan, host side (the shader side and the algorithm:
// shaders/sampler_stage.glsl): the plan for a case on a device, a pure function of the shape and
// the DeviceLimits so supports() and prepare() agree, and the two dispatches of a sampler's shader
// (its PASS constant 0: thresholds per row of logits; 1: select and race per sampled row). A
// sampling method's Vulkan impl is this stage with its shader's name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "../runtime/vulkan_backend.h"
#include "attnbench/backend.h"
#include "attnbench/impl.h"
#include "reference/decoding/sampler_common.h"

namespace attnbench::vulkan {

struct SamplerPlan {
  std::string unsupported;  // non-empty: the case cannot run here, and why
  uint32_t threads = 0;         // thresholds pass: a multiple of 32 dividing the 2048 bins
  uint32_t finish_threads = 0;  // select and race: about a lane per token, at most `threads`
};

SamplerPlan plan_sampler(const decoding::SamplerParams& s, const DeviceLimits& limits);

class SamplerStage {
 public:
  explicit SamplerStage(std::string shader) : shader_(std::move(shader)) {}
  Support supports(const Case& c, const DeviceLimits& limits) const;
  // Binds logits, kept and token (the contract's buffers) to the shader.
  void prepare(const Case& c, Backend& backend, const IoBuffers& io);
  void run();

 private:
  std::string shader_;
  VulkanBackend* be_ = nullptr;
  SamplerPlan plan_;
  decoding::SamplerParams params_{};
  BufferPtr cuts_;
  std::unique_ptr<BoundPipeline> thresholds_, finish_;
};

// A sampling method's Vulkan impl: the stage with the family's shader (sampling.comp), registered
// under the method's name; a processor of the stage's own (the probability floor of epsilon and
// eta) comes from the case through SamplerParams.
class SamplerImpl final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override { return stage_.supports(c, limits); }
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override { stage_.prepare(c, backend, io); }
  void run() override { stage_.run(); }

 private:
  SamplerStage stage_{"sampling"};
};

}  // namespace attnbench::vulkan
