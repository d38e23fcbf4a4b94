// The push-constant block of shaders/kivi_quant.comp: the case's KiviParams
// (reference/kvcomp/kivi_common.h) and how kivi_quant_vulkan.cpp cut the work into items, one field
// list for both compilers (glslc reads this file: ASCII, macros and C comments only).
#ifndef ATTNBENCH_VULKAN_KIVI_QUANT_PLAN_H
#define ATTNBENCH_VULKAN_KIVI_QUANT_PLAN_H

#define ATTNBENCH_VK_KIVI_QUANT_PLAN(X)                                                        \
  X(u32, key_items)   /* batch x kv_heads x (k_quant_cap / G) x head_dim: a channel's key group */ \
  X(u32, value_items) /* batch x kv_heads x v_quant_cap x (head_dim / G): a token's value group */  \
  X(u32, items)       /* those, then batch x kv_heads x (2R + 1) window rows */

#ifdef __cplusplus
#include "attnbench/param_struct.h"
#include "reference/kvcomp/kivi_common.h"

namespace attnbench::vulkan::kivi {

ATTNBENCH_PARAM_STRUCT(KiviQuantPlan, ATTNBENCH_VK_KIVI_QUANT_PLAN);

struct KiviQuantPush {
  kvcomp::KiviParams s;
  KiviQuantPlan plan;
};

}  // namespace attnbench::vulkan::kivi
#endif  // __cplusplus
#endif
