// sampling on Vulkan (variant "radix_select"): the decoding family's sampler stage
// (sampler_stage.h, shaders/sampler_stage.glsl): thresholds by radix selection on the logits'
// order keys with fixed-point masses, no sort, then the race over the kept tokens.
#include "attnbench/impl.h"
#include "sampler_stage.h"

namespace attnbench::vulkan {
namespace {

class VulkanSampling final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override { return stage_.supports(c, limits); }
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override { stage_.prepare(c, backend, io); }
  void run() override { stage_.run(); }

 private:
  SamplerStage stage_{"sampling"};
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSampling, "sampling", "vulkan", "radix_select");
