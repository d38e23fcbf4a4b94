// The per-step eviction on Vulkan (variant "step"; contract: reference/kvcomp/eviction_step.h),
// the impl of every method with a decode step (h2o, tova; each method's <method>_vulkan.cpp
// registers it): the backend's gqa decode over the slots (out and each head's log-sum-exp), then
// shaders/eviction_step.comp's two passes (scores of every slot, the eviction per score row).
#pragma once

#include <algorithm>

#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "reference/kvcomp/eviction_step_impl.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan {

class VulkanEvictionStep final : public kvcomp::EvictionStepImpl {
 public:
  VulkanEvictionStep() : EvictionStepImpl("vulkan") {}

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    attention_.prepare(c, backend, io);
    const kvcomp::StepParams s = kvcomp::step_params(c);
    const Shape shape = plan(s, DeviceView(be_->probe().limits));
    keys_ = be_->allocator().allocate(kvcomp::step_score_rows(s) * s.slots * sizeof(float), "step.keys");
    acc_dummy_ = be_->allocator().allocate(16, "step.no_acc");
    const Buffer& acc = s.accumulate ? io["acc"] : *acc_dummy_;
    std::vector<uint32_t> constants = {shape.threads, dtype_code(c.dtype), static_cast<uint32_t>(s.head_dim), shape.lanes,
                                       vec16(s.head_dim, dtype_size(c.dtype)), 0};
    const std::vector<const Buffer*> buffers = {&io["q"], &io["k"], &attention_.lse(), &io["pos"], &acc,
                                                &io["scores"], keys_.get(), &io["evicted"]};
    scores_ = be_->bind(be_->pipeline("eviction_step", constants, 8), buffers);
    constants[5] = 1;
    evict_ = be_->bind(be_->pipeline("eviction_step", constants, 8), buffers);
    scores_push_ = {s, ceil_div(kvcomp::step_score_rows(s) * static_cast<uint64_t>(s.slots), shape.threads / shape.lanes)};
    evict_push_ = {s, static_cast<uint32_t>(kvcomp::step_score_rows(s))};
  }

  void run() override {
    attention_.run();
    be_->dispatch(*scores_, scores_push_, scores_push_.groups);
    be_->dispatch(*evict_, evict_push_, evict_push_.groups);
  }

  std::string compute_ceiling() const override { return attention_.compute_ceiling(); }

 protected:
  std::string unsupported(const Case& c, const DeviceLimits& limits) const override {
    const kvcomp::StepParams s = kvcomp::step_params(c);
    const Shape shape = plan(s, DeviceView(limits));
    if (shape.lanes * 8u * 8u < static_cast<uint32_t>(s.head_dim))
      return cat("head_dim=", s.head_dim, " needs more than 8 chunks per invocation of the step's scores");
    return {};
  }

 private:
  struct Shape {
    uint32_t threads, lanes;
  };
  struct Push {
    kvcomp::StepParams s;
    uint32_t groups;
  };

  // LANES invocations per slot: one 8-element chunk of the key each, up to the workgroup.
  static Shape plan(const kvcomp::StepParams& s, const DeviceView& d) {
    const uint32_t threads = d.workgroup(128);
    return {threads, std::min(threads, pow2_ceil(ceil_div(s.head_dim, 8)))};
  }

  VulkanBackend* be_ = nullptr;
  kvcomp::StepAttention attention_;
  BufferPtr keys_, acc_dummy_;
  std::unique_ptr<BoundPipeline> scores_, evict_;
  Push scores_push_{}, evict_push_{};
};

}  // namespace attnbench::vulkan
