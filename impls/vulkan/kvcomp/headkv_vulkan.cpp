// headkv on Vulkan: the SnapKV scorer (snapkv_scorer_vulkan.h), per-head budgets planned from the head scores.
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "headkv", "vulkan", "pooled");
