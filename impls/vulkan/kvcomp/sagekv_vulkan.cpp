// sagekv on Vulkan: the SnapKV scorer (snapkv_scorer_vulkan.h), one query, sinks and a recent window.
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "sagekv", "vulkan", "pooled");
