// tova on Vulkan: the SnapKV scorer (snapkv_scorer_vulkan.h), one query, one ranking per sequence.
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "tova", "vulkan", "pooled");
