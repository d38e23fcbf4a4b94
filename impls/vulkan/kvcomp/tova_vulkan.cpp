// tova on Vulkan. Prefill: the SnapKV scorer (snapkv_scorer_vulkan.h), one query, one ranking per
// sequence. Decode: the per-step eviction (eviction_step_vulkan.h).
#include "eviction_step_vulkan.h"
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "tova", "vulkan", "pooled");
ATTNBENCH_IMPL(attnbench::vulkan::VulkanEvictionStep, "tova", "vulkan", "step");
