// snapkv on Vulkan: the SnapKV scorer with a uniform budget (snapkv_scorer_vulkan.h).
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "snapkv", "vulkan", "pooled");
