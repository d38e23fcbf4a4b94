// rope on Vulkan (variant "rotate"): shaders/rope.comp, one workgroup per token.
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "reference/attention/rope_common.h"
#include "runtime/plan_support.h"
#include "runtime/vulkan_backend.h"

namespace attnbench::vulkan {
namespace {

class VulkanRope final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    if (std::string why = missing_feature(limits, {"storage16", "float64"}, "rope's kernel (16-bit tensors, fp64 angle reduction)");
        !why.empty())
      return Support::no(why);
    const rope::RopeParams s = rope::rope_params(c);
    const uint64_t es = dtype_size(c.dtype);
    const uint64_t q = uint64_t{static_cast<uint32_t>(s.batch)} * s.q_heads * s.tokens * s.head_dim;
    const uint64_t k = uint64_t{static_cast<uint32_t>(s.batch)} * s.kv_heads * s.tokens * s.head_dim;
    if (std::string why = over_binding({{"q", q * es, es}, {"k", k * es, es}}, DeviceView(limits)); !why.empty())
      return Support::no(why);
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    push_ = rope::rope_params(c);
    const DeviceView d(be_->probe().limits);
    const Pipeline& p = be_->pipeline("rope", {d.workgroup(128), dtype_code(c.dtype)}, 6);
    bound_ = be_->bind(p, {&io["q"], &io["k"], &io["positions"], &io["inv_freq"], &io["q_rot"], &io["k_rot"]});
    groups_ = static_cast<uint32_t>(push_.batch) * static_cast<uint32_t>(push_.tokens);
  }

  void run() override { be_->dispatch(*bound_, push_, groups_); }

 private:
  VulkanBackend* be_ = nullptr;
  rope::RopeParams push_{};
  std::unique_ptr<BoundPipeline> bound_;
  uint32_t groups_ = 0;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanRope, "rope", "vulkan", "rotate");
