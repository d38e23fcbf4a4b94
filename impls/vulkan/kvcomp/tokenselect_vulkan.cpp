// tokenselect on Vulkan: the SnapKV scorer (snapkv_scorer_vulkan.h) with a window of one query and
// each softmax over the candidates, one vote per sequence; then the family's select and the decode
// step over the kept set (scored_selection_vulkan.h, selection-only).
#include "snapkv_scorer_vulkan.h"

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSnapkvScorer, "tokenselect", "vulkan", "pooled");
