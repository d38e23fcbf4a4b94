// streaming_llm on Vulkan (variant "gather"): two dispatches, the kept positions and lengths
// (streaming_llm_index.comp), then the compacted cache copied from them by the gather every
// KV-compression impl shares (kv_gather.comp). Pure data movement: the copy reads and writes
// each kept row once, so the case is bound by memory bandwidth.
#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "kv_gather.h"
#include "reference/kvcomp/streaming_llm_common.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan {
namespace {

// The push-constant block of streaming_llm_index.comp, member for member.
struct IndexPush {
  uint32_t rows, budget, kv_len, kept, sinks;
};

struct Plan {
  std::string unsupported;
  std::vector<uint32_t> index_spec;  // {threads}
  IndexPush index{};
  uint64_t index_groups = 0;
  GatherPlan gather;
};

Plan make_plan(const kvcomp::StreamingShape& s, DType dtype, const DeviceLimits& limits) {
  const DeviceView d(limits);
  Plan p;
  p.unsupported = missing_feature(limits, {"storage16"}, "the gather kernel");  // 2-byte words
  if (!p.unsupported.empty()) return p;
  const uint64_t rows = static_cast<uint64_t>(s.batch * s.kv_heads), es = dtype_size(dtype);
  const uint32_t threads = d.workgroup(128);
  p.index_spec = {threads};
  p.index = {static_cast<uint32_t>(rows), static_cast<uint32_t>(s.budget), static_cast<uint32_t>(s.kv_len),
             static_cast<uint32_t>(s.kept()), static_cast<uint32_t>(s.sinks())};
  p.index_groups = ceil_div(rows * static_cast<uint64_t>(s.budget), threads);
  p.gather = make_gather_plan(rows, s.kv_len, s.budget, s.kept(), static_cast<uint64_t>(s.head_dim) * es, d);
  p.unsupported = over_binding({{"k/v", rows * s.kv_len * s.head_dim * es, es},
                                {"k_kept/v_kept", rows * s.budget * s.head_dim * es, es},
                                {"kept_idx", rows * s.budget * 4, 4}},
                               d);
  return p;
}

class VulkanStreamingLlm final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const Plan p = make_plan(kvcomp::streaming_shape(c), c.dtype, limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    plan_ = make_plan(kvcomp::streaming_shape(c), c.dtype, be_->probe().limits);
    ATTNBENCH_ASSERT(plan_.unsupported.empty(), "prepare() of a case supports() refused: ", plan_.unsupported);
    index_ = be_->bind(be_->pipeline("streaming_llm_index", plan_.index_spec, 2), {&io["kept_idx"], &io["kept_len"]});
    gather_ = be_->bind(be_->pipeline("kv_gather", plan_.gather.spec, 5),
                        {&io["kept_idx"], &io["k"], &io["v"], &io["k_kept"], &io["v_kept"]});
  }

  void run() override {
    be_->dispatch(*index_, &plan_.index, sizeof plan_.index, plan_.index_groups);
    be_->dispatch(*gather_, &plan_.gather.push, sizeof plan_.gather.push, plan_.gather.groups);
  }

 private:
  VulkanBackend* be_ = nullptr;
  Plan plan_;
  std::unique_ptr<Kernel> index_, gather_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanStreamingLlm, "streaming_llm", "vulkan", "gather");
