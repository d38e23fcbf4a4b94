// streaming_llm on Vulkan (variant "gather"): positions only, so the family's stages are all of
// it (scored_selection_vulkan.h): kv_select writes the sinks and the recent window, kv_gather
// copies their rows. Bound by memory bandwidth.
#include "scored_selection_vulkan.h"

namespace attnbench::vulkan {
namespace {

class VulkanStreamingLlm final : public VulkanScoredSelection {};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanStreamingLlm, "streaming_llm", "vulkan", "gather");
