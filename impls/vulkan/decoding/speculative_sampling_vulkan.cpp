// speculative_sampling on Vulkan (variant "race"): the chain verification stage
// (chain_verify_stage.h), every row verifying all its drafts, entirely on the device.
#include "../runtime/vulkan_backend.h"
#include "attnbench/impl.h"
#include "chain_verify_stage.h"

namespace attnbench::vulkan {
namespace {

class VulkanSpeculativeSampling final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const std::string why = ChainVerifyStage::unsupported(decoding::speculative_params(c), limits);
    return why.empty() ? Support::yes() : Support::no(why);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    stage_.prepare(decoding::speculative_params(c), as_vulkan(backend), io, nullptr);
  }

  void run() override { stage_.record(); }

 private:
  ChainVerifyStage stage_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSpeculativeSampling, "speculative_sampling", "vulkan", "race");
