// The push-constant block of shaders/kivi_decode.comp and kivi_decode_merge.comp: the case's
// KiviParams (reference/kvcomp/kivi_common.h) and how kivi_decode_vulkan.cpp cut the work, one
// field list for both compilers (glslc reads this file: ASCII, macros and C comments only).
#ifndef ATTNBENCH_VULKAN_KIVI_DECODE_PLAN_H
#define ATTNBENCH_VULKAN_KIVI_DECODE_PLAN_H

#define ATTNBENCH_VK_KIVI_DECODE_PLAN(X)                                                       \
  X(u32, row_blocks) /* workgroups along a KV head's group of query rows (RB rows each) */     \
  X(u32, splits)     /* key splits; more than one writes partials that the merge combines */   \
  X(u32, split_len)  /* keys per split, a multiple of a quarter of the kernel's tile */        \
  X(u32, groups)     /* workgroups of the decode pass */

#ifdef __cplusplus
#include "attnbench/param_struct.h"
#include "reference/kvcomp/kivi_common.h"

namespace attnbench::vulkan::kivi {

ATTNBENCH_PARAM_STRUCT(KiviDecodePlan, ATTNBENCH_VK_KIVI_DECODE_PLAN);

struct KiviDecodePush {
  kvcomp::KiviParams s;
  KiviDecodePlan plan;
};

}  // namespace attnbench::vulkan::kivi
#endif  // __cplusplus
#endif
