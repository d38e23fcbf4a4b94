// adakv on Vulkan: the SnapKV scorer (snapkv_scorer_vulkan.h), budgets chosen across the KV heads (the family's kv_across).
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "adakv", "vulkan", "pooled");
