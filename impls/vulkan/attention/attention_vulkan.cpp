// mha, mqa and gqa on Vulkan: one impl class per variant serving all three methods, as the CPU
// backend's does.
//   portable    every device: the split-KV kernel (decode) or the tiled kernel (prefill), in
//               f32, f16 and bf16 (attention_plan.h chooses)
//   coopmat_nv  devices offering VK_NV_cooperative_matrix: f16 prefill on the tensor cores
// prepare() builds the pipelines (cached by the backend) and binds the buffers once; run()
// records one dispatch, plus the merge of split partials when the plan splits the keys.
#include "../runtime/vulkan_backend.h"
#include "attention_plan.h"
#include "runtime/plan_support.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"

namespace attnbench::vulkan {
namespace {

class VulkanAttention : public Impl {
 public:
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    const attention::AttentionParams s = attention::attention_params(c);
    plan_ = make_plan(c, be_->probe().limits);
    ATTNBENCH_ASSERT(plan_.unsupported.empty(), "prepare() of a case supports() refused: ", plan_.unsupported);
    const bool split = plan_.push.plan.splits > 1;
    part_ml_ = be_->allocator().allocate(split ? attn::partial_ml_bytes(s, plan_) : 16, "attention.partial_ml");
    part_o_ = be_->allocator().allocate(split ? attn::partial_o_bytes(s, plan_) : 16, "attention.partial_o");
    const Pipeline& main = be_->pipeline(plan_.shader, plan_.constants, 9);
    // Without ALiBi the slopes binding is never read; q stands in for it.
    Buffer* slopes = s.alibi ? &io["alibi_slopes"] : &io["q"];
    main_ = be_->bind(main, {&io["q"], &io["k"], &io["v"], &io["kv_len"], &io["O"], &io["LSE"], part_ml_.get(), part_o_.get(),
                             slopes});
    if (split) {
      const uint32_t nt = std::max(64u, be_->caps().max_subgroup_size);
      const Pipeline& merge = be_->pipeline(
          "attention_merge", {nt, dtype_code(c.dtype), static_cast<uint32_t>(s.head_dim), plan_.partial_stride}, 4);
      merge_ = be_->bind(merge, {part_ml_.get(), part_o_.get(), &io["O"], &io["LSE"]});
      merge_push_[0] = static_cast<uint32_t>(s.batch * s.q_heads * s.q_len);
      merge_push_[1] = plan_.push.plan.splits;
    }
  }

  void run() override {
    be_->dispatch(*main_, plan_.push, plan_.push.plan.groups);
    if (merge_) be_->dispatch(*merge_, merge_push_, merge_push_[0]);
  }

 protected:
  virtual attn::Plan make_plan(const Case& c, const DeviceLimits& limits) const = 0;
  Support support_of(const Case& c, const DeviceLimits& limits) const {
    const attn::Plan p = make_plan(c, limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

 private:
  VulkanBackend* be_ = nullptr;
  attn::Plan plan_;
  BufferPtr part_ml_, part_o_;
  std::unique_ptr<BoundPipeline> main_, merge_;
  uint32_t merge_push_[2] = {0, 0};
};

class PortableAttention final : public VulkanAttention {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override { return support_of(c, limits); }

 protected:
  attn::Plan make_plan(const Case& c, const DeviceLimits& limits) const override {
    return attn::plan_portable(attention::attention_params(c), c.dtype, limits);
  }
};

class CoopmatNvAttention final : public VulkanAttention {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override { return support_of(c, limits); }

 protected:
  attn::Plan make_plan(const Case& c, const DeviceLimits& limits) const override {
    return attn::plan_coopmat_nv(attention::attention_params(c), c.dtype, limits, c.phase);
  }
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "mha", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "mqa", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "gqa", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "swa", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "cog", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "mha", "vulkan", "coopmat_nv");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "mqa", "vulkan", "coopmat_nv");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "gqa", "vulkan", "coopmat_nv");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "swa", "vulkan", "coopmat_nv");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "cog", "vulkan", "coopmat_nv");
