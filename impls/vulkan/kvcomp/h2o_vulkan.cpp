// h2o on Vulkan. Prefill: the SnapKV scorer (snapkv_scorer_vulkan.h) with every prompt query as
// its window, blocked over the queries: the causal column sums, never a T × T matrix. Decode: the
// per-step eviction (eviction_step_vulkan.h).
#include "eviction_step_vulkan.h"
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "h2o", "vulkan", "pooled");
ATTNBENCH_IMPL(attnbench::vulkan::VulkanEvictionStep, "h2o", "vulkan", "step");
