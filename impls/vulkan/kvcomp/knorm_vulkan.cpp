// knorm on Vulkan (variant "norms"): the key norms (shaders/knorm_scores.comp), then the family's
// selection and gather (scored_selection_vulkan.h).
#include "runtime/plan_support.h"
#include "scored_selection_vulkan.h"

namespace attnbench::vulkan {
namespace {

class VulkanKnorm final : public VulkanScoredSelection {
  void prepare_scores(const Case& c, const IoBuffers& io) override {
    const kvcomp::SelectionParams& s = selection();
    const DeviceView d(backend().probe().limits);
    const uint32_t threads = d.workgroup(128), lanes = std::min(threads, pow2_ceil(ceil_div(s.head_dim, 8)));
    const Pipeline& p = backend().pipeline(
        "knorm_scores", {threads, dtype_code(c.dtype), static_cast<uint32_t>(s.head_dim), lanes, vec16(s.head_dim, s.elem_bytes)}, 2);
    scores_ = backend().bind(p, {&io["k"], &scores()});
    push_ = {s, {ceil_div(kvcomp::cache_rows(s) * static_cast<uint64_t>(s.candidates), threads / lanes)}};
  }

  void score() override { backend().dispatch(*scores_, push_, push_.plan.groups); }

  std::unique_ptr<BoundPipeline> scores_;
  kv::ScorePush push_{};
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanKnorm, "knorm", "vulkan", "norms");
