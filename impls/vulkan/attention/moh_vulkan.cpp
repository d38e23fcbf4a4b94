// moh on Vulkan (variant "portable"): the stages of reference/attention/moh_common.h's
// moh_stages(), in order: (learned) the router logits on the projection stage with an f32 output,
// the router (shaders/moh_router.comp, one workgroup per token: scores, kept heads, gates,
// heads_idx), then the attention stage with head_sparse, which compacts each KV head's running
// rows and computes only those. The attention runs on the portable kernels: the cooperative-matrix
// kernel does not walk the row map.
#include <algorithm>
#include <vector>

#include "attention_stage.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "projection_stage.h"
#include "reference/attention/moh_common.h"
#include "runtime/plan_support.h"
#include "runtime/vulkan_backend.h"

namespace attnbench::vulkan {
namespace {

// The router's kernel shape: its specialization constants {threads, dtype, head_dim, lanes per
// head's norm, 16-byte rows, heads}.
struct RouterPlan {
  std::string unsupported;
  std::vector<uint32_t> constants;
};

RouterPlan plan_router(const moh::RouterParams& r, DType dtype, const DeviceLimits& limits) {
  RouterPlan p;
  const DeviceView d(limits);
  if (dtype != DType::f32) p.unsupported = missing_feature(limits, {"storage16"}, "the router");
  if (!p.unsupported.empty()) return p;
  // A power of two (the shader's reduction tree): Vulkan's subgroup sizes are.
  const uint32_t threads = pow2_floor(d.workgroup(128));
  const auto heads = static_cast<uint32_t>(r.heads);
  const uint64_t shared = uint64_t{4} * (3 * uint64_t{heads} + 2) + uint64_t{12} * threads;
  if (shared > d.shared) {
    p.unsupported = cat("the router of ", heads, " heads needs ", shared, " bytes of shared memory; the device has ", d.shared);
    return p;
  }
  const auto head_dim = static_cast<uint32_t>(r.head_dim);
  const uint32_t lanes = std::min(threads, pow2_ceil(ceil_div(head_dim, 8)));
  p.constants = {threads, dtype_code(dtype), head_dim, lanes, vec16(head_dim, dtype_size(dtype)), heads};
  return p;
}

struct MohPlans {
  std::string unsupported;  // the first stage's reason, named
  moh::MohStages stages;
  proj::Plan logits;  // learned only
  RouterPlan router;
  attn::Plan attention;
};

MohPlans plan_moh(const Case& c, const DeviceLimits& limits) {
  MohPlans p;
  p.stages = moh::moh_stages(c);
  const moh::MohStages& st = p.stages;
  if (st.router.learned) p.logits = proj::plan_projection(st.router_logits, c.dtype, limits);
  p.router = plan_router(st.router, c.dtype, limits);
  p.attention = attn::plan_variant(attn::Variant::portable, st.attention, c.dtype, limits, c.phase);
  if (!p.logits.unsupported.empty()) p.unsupported = cat("router_logits: ", p.logits.unsupported);
  else if (!p.router.unsupported.empty()) p.unsupported = cat("router: ", p.router.unsupported);
  else if (!p.attention.unsupported.empty()) p.unsupported = cat("attention: ", p.attention.unsupported);
  return p;
}

class VulkanMoh final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const MohPlans p = plan_moh(c, limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    VulkanBackend& be = as_vulkan(backend);
    const MohPlans p = plan_moh(c, be.probe().limits);
    ATTNBENCH_ASSERT(p.unsupported.empty(), "prepare() of a case supports() refused: ", p.unsupported);
    be_ = &be;
    router_push_ = p.stages.router;
    learned_ = router_push_.learned != 0;
    const Buffer &q = io["q"], &gates = io["gates"];
    // Without the learned router the logits binding is never read; q stands in for it.
    const Buffer* logits = &q;
    if (learned_) {
      logits_ = be.allocator().allocate(std::max<uint64_t>(16, static_cast<uint64_t>(p.stages.logit_elements) * 4), "moh.logits");
      logits = logits_.get();
      // Every row of the one problem is computed (no limit_rows): x stands in for kv_len.
      logits_stage_.prepare(be, p.logits, io["x"], io["w_router"], io["x"], *logits_);
    }
    router_ = be.bind(be.pipeline("moh_router", p.router.constants, 4), {&q, logits, &gates, &io["heads_idx"]});
    const attention::AttentionParams& a = p.stages.attention;
    attention_.prepare(be, p.attention, c.dtype, attn::case_buffers(a, io, &gates));
  }

  void run() override {
    if (learned_) logits_stage_.run();
    be_->dispatch(*router_, router_push_, static_cast<uint64_t>(router_push_.batch) * router_push_.q_len);
    attention_.run();
  }

 private:
  VulkanBackend* be_ = nullptr;
  moh::RouterParams router_push_{};
  bool learned_ = false;
  BufferPtr logits_;
  proj::Stage logits_stage_;
  std::unique_ptr<BoundPipeline> router_;
  attn::Stage attention_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanMoh, "moh", "vulkan", "portable");
