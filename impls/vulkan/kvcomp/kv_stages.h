// The KV-selection family's shared stages on Vulkan (the contract: reference/kvcomp/
// scored_selection.h), used by every method's impl through scored_selection_vulkan.h:
//   kv_pool    raw scores per query head [batch·q_heads, segments, candidates] (a scorer's split
//              partial sums) → [batch·kv_heads, candidates]: Σ segments · pre_scale, pooled over
//              the keys within the radius (max, or the mean of in-range keys), averaged over the
//              group's heads in order
//   kv_across  AdaKV's budgets (sel.across_heads), around two more kv_select passes: each row's
//              floor (kv_select with `floor` kept, no forced tokens), the floor boosted to +inf,
//              the best kv_heads·top_k of each sequence (kv_select over one flattened row per
//              sequence), and each row's count of them as its budget
//   kv_select  per row (one workgroup): forced tokens, the top_k candidates by radix select with
//              the tie rule, −1 beyond the row's length, the length
//   kv_gather  k_kept, v_kept at kept_idx, bit for bit; zeros beyond each row's length (none for a
//              selection-only method, whose decode step reads the kept keys in place)
//   kv_merge   a merging method's slots (kvcomp::merged_slots(c) = M > 0; reference/kvcomp/
//              merged_slots.h): one workgroup per (row, slot), lanes over head_dim; the slot's
//              group of evicted tokens located in kept_idx by binary search, its keys and values
//              summed in order in fp32, divided by the group's size and stored in the dtype
//              (k_merged, v_merged), the size as w_merged. Long groups on a device with a loop cap
//              (or under vulkan.splits) are summed in passes, the running sums kept in a workspace
//              between them, so the order of every sum stays the tokens' order.
//   kv_cache   the selection cache (reference/kvcomp/selection_cache.h; selection-only methods
//              under kvcomp::selection_cache_on(c)), two shaders: kv_cache_hit, one workgroup per
//              score row, the cosine of q and q_cached over the row's heads·head_dim values (each
//              lane's strided elements summed in order, then a shared-memory tree in a fixed
//              order: dot, ‖q‖², ‖q_c‖² in fp32, `precise`), cache_hit = cos ≥ threshold; and
//              kv_cache_take, after kv_select, one workgroup per cache row whose score row hit:
//              kept_idx = sinks, topk_cached[score row], the recent window, −1 beyond; kept_len
//              = sel.kept
// The push-constant blocks are SelectionParams plus these plan fields; the field lists are read
// by glslc too (ASCII, macros only; the C++ lives inside __cplusplus).
#ifndef ATTNBENCH_VULKAN_KV_STAGES_H
#define ATTNBENCH_VULKAN_KV_STAGES_H

#define ATTNBENCH_KV_POOL_PLAN(X)                                        \
  X(u32, segments)  /* partial sums per (head, key) to add */           \
  X(u32, chunks)    /* workgroups per row: ceil(candidates / threads) */ \
  X(u32, groups)    /* rows * chunks */                                   \
  X(f32, pre_scale) /* times the sum of the segments (1/window) */      \
  X(f32, inv_group) /* 1 / the score row's heads, rounded once on the host */ \
  X(u32, visible_window) /* > 0: divide key j's sum by min(this, kv_len − j) instead */

#define ATTNBENCH_KV_GATHER_PLAN(X) X(u32, words) /* 2-, 4- or 16-byte words of each of k_kept, v_kept */

#define ATTNBENCH_KV_MERGE_PLAN(X)                                                          \
  X(u32, slots)      /* M: merged slots per row */                                         \
  X(u32, groups)     /* rows * slots: one workgroup per (row, slot) */                      \
  X(u32, pass_begin) /* the pass's first token within each group (its rank among them) */   \
  X(u32, pass_len)   /* tokens of each group this pass adds */                              \
  X(u32, first)      /* 1: the pass starts the sums at 0, else reads the workspace's */     \
  X(u32, last)       /* 1: the pass writes the means and weights, else the sums */

// The selection cache's stages (both push SelectionParams and this).
#define ATTNBENCH_KV_CACHE_PLAN(X) X(f32, threshold) /* the cosine at and above which a row hits */

// A score shader that needs only the selection and its grid (knorm's).
#define ATTNBENCH_KV_SCORE_PLAN(X) X(u32, groups) /* workgroups launched */

#ifdef __cplusplus
#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/param_struct.h"
#include "reference/kvcomp/scored_selection_common.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan::kv {

ATTNBENCH_PARAM_STRUCT(PoolPlan, ATTNBENCH_KV_POOL_PLAN);
ATTNBENCH_PARAM_STRUCT(GatherPlan, ATTNBENCH_KV_GATHER_PLAN);
ATTNBENCH_PARAM_STRUCT(ScorePlan, ATTNBENCH_KV_SCORE_PLAN);
ATTNBENCH_PARAM_STRUCT(MergePlan, ATTNBENCH_KV_MERGE_PLAN);
ATTNBENCH_PARAM_STRUCT(CachePlan, ATTNBENCH_KV_CACHE_PLAN);

struct SelectPush {
  kvcomp::SelectionParams sel;
};
struct PoolPush {
  kvcomp::SelectionParams sel;
  PoolPlan plan;
};
struct GatherPush {
  kvcomp::SelectionParams sel;
  GatherPlan plan;
};
struct ScorePush {
  kvcomp::SelectionParams sel;
  ScorePlan plan;
};
struct MergePush {
  kvcomp::SelectionParams sel;
  MergePlan plan;
};
struct CachePush {
  kvcomp::SelectionParams sel;
  CachePlan plan;
};

// The stages' shapes for a case on a device: pure functions of the selection and the limits.
struct StagesPlan {
  std::string unsupported;                 // why the family's stages cannot run here ("" if they can)
  std::vector<uint32_t> select_constants;  // {threads, tokens per lane and chunk}
  std::vector<uint32_t> gather_constants;  // {threads, word bytes, words per row}
  SelectPush select{};
  GatherPush gather{};
  uint64_t select_groups = 0, gather_groups = 0;
  // sel.across_heads with candidates to choose: the floors' and the sequences' kv_select passes,
  // kv_across's {threads, mode} (its push is `select`) and the workspaces' sizes.
  bool across = false;
  SelectPush floor_select{}, across_select{};
  uint64_t floor_groups = 0, across_groups = 0, copy_groups = 0, raise_groups = 0, count_groups = 0;
  uint32_t across_threads = 0;
  uint64_t floor_idx_bytes = 16, across_idx_bytes = 16, boosted_bytes = 16;
};
StagesPlan plan_stages(const kvcomp::SelectionParams& s, const DeviceLimits& limits);

// The pooling stage for `segments` partial sums of raw scores per query head.
struct PoolStage {
  std::string unsupported;
  std::vector<uint32_t> constants;  // {threads, radius, max}
  PoolPush push{};
};
// visible_window > 0: each key's sum is divided by the window queries that see it (H2O's
// mean_visible), min(visible_window, kv_len − j), instead of scaled by pre_scale.
PoolStage plan_pool(const kvcomp::SelectionParams& s, uint32_t segments, float pre_scale, int32_t radius, int32_t mode,
                    const DeviceLimits& limits, uint32_t visible_window = 0);

// The merge stage of a method that merges its evicted tokens into `slots` slots per row, after
// the gather: one dispatch per pass, each over `groups` workgroups (every pass's push in order).
// A group holds at most kv_len − sinks − recent tokens (the forced ones are always kept); a pass
// adds as many of them as the device's loop cap lets one invocation walk (keys_within_loop_cap),
// or a vulkan.splits-th of them, so one pass on a GPU.
struct MergeStage {
  std::string unsupported;          // why the merge cannot run here ("" if it can)
  std::vector<uint32_t> constants;  // {threads, dtype code, channels per lane}
  std::vector<MergePush> passes;
  uint64_t groups = 0;
  uint64_t sums_bytes = 16;  // the running sums between passes: [groups, 2, head_dim] f32
};
MergeStage plan_merge(const kvcomp::SelectionParams& s, int64_t slots, DType dtype, const DeviceLimits& limits);

// The selection cache's stages for a case with a cosine `threshold` (queries of `dtype`).
struct CacheStage {
  std::string unsupported;               // why the stages cannot run here ("" if they can)
  std::vector<uint32_t> hit_constants;   // kv_cache_hit: {threads, dtype code}
  std::vector<uint32_t> take_constants;  // kv_cache_take: {threads}
  CachePush push{};
  uint64_t hit_groups = 0, take_groups = 0;  // score rows, cache rows
};
CacheStage plan_cache(const kvcomp::SelectionParams& s, DType dtype, float threshold, const DeviceLimits& limits);

}  // namespace attnbench::vulkan::kv
#endif  // __cplusplus
#endif
