// penalties on Vulkan (variant "scatter"): shaders/penalties.comp, one workgroup of 256 lanes per
// row (zero the counts, scatter the history by atomics, penalise the row), one dispatch.
#include <memory>

#include "../runtime/plan_support.h"
#include "../runtime/vulkan_backend.h"
#include "attnbench/impl.h"
#include "reference/decoding/penalties_common.h"

namespace attnbench::vulkan {
namespace {

class VulkanPenalties final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const decoding::PenaltiesParams p = decoding::penalties_params(c);
    const uint64_t BV = uint64_t{static_cast<uint32_t>(p.batch)} * static_cast<uint32_t>(p.vocab);
    const std::string why = over_binding(
        {{"logits", BV * 4, 4}, {"counts", BV * 4, 4}, {"history", uint64_t{4} * p.batch * static_cast<uint64_t>(p.history), 4}},
        DeviceView(limits));
    return why.empty() ? Support::yes() : Support::no(why);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    p_ = decoding::penalties_params(c);
    const uint32_t threads = DeviceView(be_->probe().limits).workgroup(256);
    pipeline_ = be_->bind(be_->pipeline("penalties", {threads}, 4),
                          {&io["logits"], &io["history"], &io["logits_out"], &io["counts"]});
  }

  void run() override { be_->dispatch(*pipeline_, p_, static_cast<uint64_t>(p_.batch)); }

 private:
  VulkanBackend* be_ = nullptr;
  decoding::PenaltiesParams p_{};
  std::unique_ptr<BoundPipeline> pipeline_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanPenalties, "penalties", "vulkan", "scatter");
