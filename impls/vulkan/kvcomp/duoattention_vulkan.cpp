// duoattention on Vulkan (variant "gather"): once the streaming heads are planned (per-row
// budgets from the gate scores), positions only, so the family's stages are all of it
// (scored_selection_vulkan.h): kv_select writes a streaming head's sinks and recent window and a
// retrieval head's every token without reading a score, kv_gather copies their rows. No scoring.
// Bound by memory bandwidth.
#include "scored_selection_vulkan.h"

namespace attnbench::vulkan {
namespace {

class VulkanDuoattention final : public VulkanScoredSelection {};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanDuoattention, "duoattention", "vulkan", "gather");
