// zeromerge (ZeroMerge's prefill init) on Vulkan: the SnapKV scorer (snapkv_scorer_vulkan.h) over
// every prompt query with its decay (snapkv_scores weights query i's probabilities by
// e^(log_decay·(w−1−i))), then the family's stages, kv_merge among them after the gather: the
// evicted tokens' groups averaged into the dense slots (kv_stages.h, scored_selection_vulkan.h).
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "zeromerge", "vulkan", "pooled");
