// h2o on Vulkan: the SnapKV scorer (snapkv_scorer_vulkan.h) with every prompt query as its window, blocked over
// the queries: the causal column sums, never a T × T matrix.
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "h2o", "vulkan", "pooled");
