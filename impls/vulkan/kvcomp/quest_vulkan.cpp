// quest on Vulkan (variant "pages"): every KV head's page bounds from its summaries and its
// group's decode queries (shaders/quest_bounds.comp), one score per candidate token; then the
// family's select and the decode step over the kept pages (scored_selection_vulkan.h,
// selection-only). The summaries are no larger than K, whose binding the family's stages check.
#include <algorithm>

#include "attnbench/error.h"
#include "quest_plan.h"
#include "runtime/plan_support.h"
#include "scored_selection_vulkan.h"

namespace attnbench::vulkan {
namespace {

struct BoundsStage {
  std::string unsupported;
  std::vector<uint32_t> constants;  // {threads, dtype, head_dim, lanes, staged heads, vec}
  quest::BoundsPush push{};
};

// A page's lanes: one per 8-element chunk of a summary row, up to the workgroup. The staged
// queries take what the device's shared memory leaves beside the reduction's arrays, at most
// 16 KiB: every head of the group at Llama's shapes (G·head_dim ≤ 4096), fewer per stage beyond.
BoundsStage bounds_plan(const Case& c, const DeviceLimits& limits) {
  BoundsStage b;
  const kvcomp::SelectionParams s = kvcomp::selection_params(c);
  const kvcomp::QuestParams m = kvcomp::quest_params(c);
  const DeviceView d(limits);
  const uint32_t threads = d.workgroup(128), chunks = ceil_div(s.head_dim, 8);
  const uint32_t lanes = std::min(threads, pow2_ceil(chunks)), pages = threads / lanes;
  const uint64_t fixed = uint64_t{threads + pages} * 4, row_bytes = uint64_t{chunks} * 32;
  const uint64_t room = std::min<uint64_t>(16384, d.shared > fixed ? d.shared - fixed : 0);
  if (room < row_bytes) {
    b.unsupported = cat("quest_bounds stages a query row of ", row_bytes, " bytes beside ", fixed,
                        " bytes of its own in shared memory; this device has ", d.shared);
    return b;
  }
  const uint32_t heads = static_cast<uint32_t>(std::min<uint64_t>(s.group, room / row_bytes));
  b.constants = {threads, dtype_code(c.dtype), static_cast<uint32_t>(s.head_dim), lanes, heads, vec16(s.head_dim, s.elem_bytes)};
  const uint32_t blocks = ceil_div(static_cast<uint64_t>(kvcomp::quest_scored_pages(s, m)), pages);
  const uint64_t groups = uint64_t{blocks} * static_cast<uint64_t>(kvcomp::cache_rows(s));
  if (groups >= (uint64_t{1} << 32)) b.unsupported = cat("quest_bounds needs ", groups, " workgroups; it counts them in 32 bits");
  b.push = {s, m, {blocks, static_cast<uint32_t>(groups)}};
  return b;
}

class VulkanQuest final : public VulkanScoredSelection {
  std::string unsupported(const Case& c, const DeviceLimits& limits) const override { return bounds_plan(c, limits).unsupported; }

  void prepare_scores(const Case& c, const IoBuffers& io) override {
    stage_ = bounds_plan(c, backend().probe().limits);
    bounds_ = backend().bind(backend().pipeline("quest_bounds", stage_.constants, 4),
                             {&io["q"], &io["kmin"], &io["kmax"], &scores()});
  }

  void score() override { backend().dispatch(*bounds_, stage_.push, stage_.push.plan.groups); }

  BoundsStage stage_;
  std::unique_ptr<BoundPipeline> bounds_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanQuest, "quest", "vulkan", "pages");
