// The push-constant block of shaders/zeromerge_decode.comp: the case's ZeromergeParams
// (reference/kvcomp/zeromerge_common.h) and the dispatch's share of the steps, one field list for
// both compilers (glslc reads this file: ASCII, macros and C comments only).
#ifndef ATTNBENCH_VULKAN_ZEROMERGE_DECODE_PLAN_H
#define ATTNBENCH_VULKAN_ZEROMERGE_DECODE_PLAN_H

#define ATTNBENCH_VK_ZEROMERGE_DECODE_PLAN(X)                                                   \
  X(u32, rows)       /* workgroups: one per (sequence, KV head) */                             \
  X(u32, step_begin) /* the steps this dispatch runs; 0 also copies the cache into the outputs */ \
  X(u32, step_end)                                                                             \
  X(u32, copy_words) /* words of COPY_WORD bytes in one row of k_cache (and of v_cache) */

#ifdef __cplusplus
#include "attnbench/param_struct.h"
#include "reference/kvcomp/zeromerge_common.h"

namespace attnbench::vulkan::zeromerge {

ATTNBENCH_PARAM_STRUCT(ZeromergeDecodePlan, ATTNBENCH_VK_ZEROMERGE_DECODE_PLAN);

struct ZeromergeDecodePush {
  kvcomp::ZeromergeParams s;
  ZeromergeDecodePlan plan;
};

}  // namespace attnbench::vulkan::zeromerge
#endif  // __cplusplus
#endif
