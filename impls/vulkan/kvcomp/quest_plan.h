// The grid of quest's bounds on Vulkan (shaders/quest_bounds.comp, planned in quest_vulkan.cpp):
// one workgroup per (cache row, block of NT / LANES consecutive pages). The field list is read by
// glslc too (ASCII, macros only; the C++ lives inside __cplusplus).
#ifndef ATTNBENCH_VULKAN_QUEST_PLAN_H
#define ATTNBENCH_VULKAN_QUEST_PLAN_H

#define ATTNBENCH_QUEST_BOUNDS_PLAN(X)                                    \
  X(u32, blocks) /* page blocks per row: ceil(scored pages / (NT / LANES)) */ \
  X(u32, groups) /* rows * blocks */

#ifdef __cplusplus
#include "attnbench/param_struct.h"
#include "reference/kvcomp/quest_common.h"

namespace attnbench::vulkan::quest {

ATTNBENCH_PARAM_STRUCT(BoundsPlan, ATTNBENCH_QUEST_BOUNDS_PLAN);

struct BoundsPush {
  kvcomp::SelectionParams sel;
  kvcomp::QuestParams m;
  BoundsPlan plan;
};
static_assert(sizeof(BoundsPush) <= 128, "Vulkan guarantees 128 bytes of push constants");

}  // namespace attnbench::vulkan::quest
#endif  // __cplusplus
#endif
