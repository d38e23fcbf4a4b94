// pyramidkv on Vulkan: the SnapKV scorer (snapkv_scorer_vulkan.h), per-layer budget.
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "pyramidkv", "vulkan", "pooled");
