// snapkv on Vulkan (variant "pooled"): scoring, pooling, selection and compaction all on the
// device, in the order snapkv_plan.h lists. prepare() builds the pipelines and binds the
// buffers once; run() records the dispatches (two, when the window or the budget makes scoring
// unnecessary; five otherwise).
#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "snapkv_plan.h"

namespace attnbench::vulkan {
namespace {

class VulkanSnapkv final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const snapkv::Plan p = snapkv::make_plan(kvcomp::snapkv_shape(c), c.dtype, limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    plan_ = snapkv::make_plan(kvcomp::snapkv_shape(c), c.dtype, be_->probe().limits);
    ATTNBENCH_ASSERT(plan_.unsupported.empty(), "prepare() of a case supports() refused: ", plan_.unsupported);
    Allocator& alloc = be_->allocator();
    part_ml_ = alloc.allocate(plan_.part_ml_bytes, "snapkv.softmax_partials");
    a_part_ = alloc.allocate(plan_.a_part_bytes, "snapkv.window_sums");
    scores_ = alloc.allocate(plan_.scores_bytes, "snapkv.scores");
    if (plan_.score) {
      std::vector<uint32_t> spec = plan_.scores_spec;
      const std::vector<const Buffer*> buffers = {&io["q_obs"], &io["k"], part_ml_.get(), a_part_.get()};
      stats_ = be_->bind(be_->pipeline("snapkv_scores", spec, 4), buffers);
      spec[6] = 1;  // MODE 1: window sums
      sums_ = be_->bind(be_->pipeline("snapkv_scores", spec, 4), buffers);
      pool_ = be_->bind(be_->pipeline("snapkv_pool", plan_.pool_spec, 2), {a_part_.get(), scores_.get()});
    }
    select_ = be_->bind(be_->pipeline("snapkv_select", plan_.select_spec, 3),
                        {scores_.get(), &io["kept_idx"], &io["kept_len"]});
    gather_ = be_->bind(be_->pipeline("kv_gather", plan_.gather.spec, 5),
                        {&io["kept_idx"], &io["k"], &io["v"], &io["k_kept"], &io["v_kept"]});
  }

  void run() override {
    if (plan_.score) {
      be_->dispatch(*stats_, &plan_.stats, sizeof plan_.stats, plan_.stats.groups);
      be_->dispatch(*sums_, &plan_.sums, sizeof plan_.sums, plan_.sums.groups);
      be_->dispatch(*pool_, &plan_.pool, sizeof plan_.pool, plan_.pool.groups);
    }
    be_->dispatch(*select_, &plan_.select, sizeof plan_.select, plan_.select.rows);
    be_->dispatch(*gather_, &plan_.gather.push, sizeof plan_.gather.push, plan_.gather.groups);
  }

 private:
  VulkanBackend* be_ = nullptr;
  snapkv::Plan plan_;
  BufferPtr part_ml_, a_part_, scores_;
  std::unique_ptr<Kernel> stats_, sums_, pool_, select_, gather_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkv, "snapkv", "vulkan", "pooled");
