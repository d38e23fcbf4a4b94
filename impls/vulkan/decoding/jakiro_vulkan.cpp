// jakiro on Vulkan (variant "staged"): the draft layer over every forward row of the batch at
// once, as the CPU impl stages it: four projections on the projection stage (the experts' gate and
// up, the router with f32 logits, the experts' down as two problems, the LM head into
// draft_logits) with shaders/jakiro_rows.comp's three row passes between them (RMSNorm, the SwiGLU
// activation, the routed mix), then eagle2_tree's Vulkan stage over the logits. Each dispatch is
// ordered after the previous one by the stream's barrier.
// The plan refuses what a projection refuses (a tensor over one storage binding: at a Llama-sized
// vocabulary and width the LM head, on lavapipe's 128 MiB) and what the tree's stage refuses.
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../attention/projection_stage.h"
#include "../runtime/plan_support.h"
#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "reference/decoding/jakiro_common.h"

namespace attnbench::vulkan {
namespace {

struct JakiroPlans {
  std::string unsupported;  // the first refusal, named
  decoding::JakiroParams p{};
  proj::Plan experts_in, router, experts_out, lm_head;
  uint32_t threads = 0;  // the row passes' workgroup
};

JakiroPlans plan_jakiro(const Case& c, const DeviceLimits& limits) {
  JakiroPlans j;
  j.p = decoding::jakiro_params(c);
  const decoding::JakiroProjections pr = decoding::jakiro_projections(j.p);
  j.experts_in = proj::plan_projection(pr.experts_in, c.dtype, limits);
  j.router = proj::plan_projection(pr.router, c.dtype, limits);
  j.experts_out = proj::plan_projection(pr.experts_out, c.dtype, limits);
  j.lm_head = proj::plan_projection(pr.lm_head, c.dtype, limits);
  // Every tensor the row passes bind is one the projections bind too (x as large as normed), so
  // their binding checks cover the passes.
  const std::array<std::pair<const char*, const proj::Plan*>, 4> named = {
      {{"experts_in", &j.experts_in}, {"router", &j.router}, {"experts_out", &j.experts_out}, {"lm_head", &j.lm_head}}};
  for (const auto& [name, plan] : named)
    if (!plan->unsupported.empty()) {
      j.unsupported = cat(name, ": ", plan->unsupported);
      return j;
    }
  // A lane per 8-element chunk of a row, 32 to 256 lanes, a power of two (the norm's tree).
  const DeviceView d(limits);
  j.threads = pow2_floor(d.workgroup(std::clamp(pow2_ceil(ceil_div(static_cast<uint32_t>(j.p.hidden), 8)), 32u, 256u)));
  return j;
}

class VulkanJakiro final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const JakiroPlans j = plan_jakiro(c, limits);
    if (!j.unsupported.empty()) return Support::no(j.unsupported);
    return stage_supports(decoding::jakiro_tree_case(c), "vulkan", limits);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    const JakiroPlans j = plan_jakiro(c, be_->probe().limits);
    ATTNBENCH_ASSERT(j.unsupported.empty(), "prepare() of a case supports() refused: ", j.unsupported);
    p_ = j.p;
    const size_t es = dtype_size(c.dtype), rows = static_cast<size_t>(p_.batch) * p_.forward_rows;
    const size_t d = static_cast<size_t>(p_.hidden);
    normed_ = be_->allocator().allocate(rows * d * es, "jakiro.normed");
    gate_up_ = be_->allocator().allocate(rows * 4 * d * es, "jakiro.gate_up");
    act_ = be_->allocator().allocate(rows * 2 * d * es, "jakiro.act");
    expert_out_ = be_->allocator().allocate(rows * 2 * d * es, "jakiro.expert_out");
    // Every projection computes all its rows (no limit_rows): its X stands in for kv_len.
    experts_in_.prepare(*be_, j.experts_in, *normed_, io["w_in"], *normed_, *gate_up_);
    router_.prepare(*be_, j.router, *normed_, io["w_router"], *normed_, io["router_logits"]);
    experts_out_.prepare(*be_, j.experts_out, *act_, io["w_down"], *act_, *expert_out_);
    head_.prepare(*be_, j.lm_head, io["features"], io["lm_head"], io["features"], io["draft_logits"]);
    const std::vector<const Buffer*> buffers = {&io["hidden_states"], &io["norm_weight"], normed_.get(),
                                                gate_up_.get(),       act_.get(),           expert_out_.get(),
                                                &io["router_logits"], &io["features"]};
    const uint32_t vec = vec16(d, es);
    for (uint32_t mode = 0; mode < 3; ++mode)
      passes_[mode] = be_->bind(be_->pipeline("jakiro_rows", {j.threads, mode, dtype_code(c.dtype), vec}, 8), buffers);
    tree_ = prepare_stage(decoding::jakiro_tree_case(c), backend, io);
  }

  void run() override {
    const uint64_t rows = static_cast<uint64_t>(p_.batch) * static_cast<uint64_t>(p_.forward_rows);
    be_->dispatch(*passes_[0], p_, rows);  // RMSNorm
    experts_in_.run();
    router_.run();
    be_->dispatch(*passes_[1], p_, rows);  // SwiGLU
    experts_out_.run();
    be_->dispatch(*passes_[2], p_, rows);  // the routed mix into the feature slots
    head_.run();
    tree_->run();
  }

 private:
  VulkanBackend* be_ = nullptr;
  decoding::JakiroParams p_{};
  BufferPtr normed_, gate_up_, act_, expert_out_;
  proj::Stage experts_in_, router_, experts_out_, head_;
  std::array<std::unique_ptr<BoundPipeline>, 3> passes_;
  std::unique_ptr<Impl> tree_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanJakiro, "jakiro", "vulkan", "staged");
