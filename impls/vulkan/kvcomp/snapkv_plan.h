// How snapkv's Vulkan scoring is shaped for a case on a device (shaders/snapkv_scores.comp): tile
// sizes from the device's shared memory and workgroup limits, grids, splits and workspace sizes.
// A pure function of the case's shape and the DeviceLimits, so supports() and prepare() agree.
//   snapkv_scores (MODE 0)  per window row and key split: softmax statistics (m, l) over every
//                           key, or with candidate_softmax over the candidates
//   snapkv_scores (MODE 1)  per window row block and candidate split: Σ_i P_{h,i,j} per head and key
// then the family's stages (kv_stages.h): kv_pool (the mean over the window, pooling, the GQA
// mean), kv_select, kv_gather (and kv_merge for a merging method). The plan fields are read by
// glslc too (ASCII list, C++ inside __cplusplus).
// The scorer's push-constant block is SelectionParams (18 fields), SnapkvParams (7) and this
// plan (7): 32 four-byte fields, exactly Vulkan's guaranteed 128 bytes. A new field must replace
// one the shader can derive (as the row blocks per (batch, KV head) are derived from the others).
#ifndef ATTNBENCH_VULKAN_SNAPKV_PLAN_H
#define ATTNBENCH_VULKAN_SNAPKV_PLAN_H

#define ATTNBENCH_SNAPKV_SCORES_PLAN(X)                                                 \
  X(u32, heads_per_block) /* HB */                                                      \
  X(u32, rows_per_head)   /* WB: window queries per block and head */                   \
  X(u32, segments)        /* ceil(window / WB); row blocks: ceil(group / HB) * segments */ \
  X(u32, splits)          /* key splits of this pass */                                 \
  X(u32, split_len)                                                                     \
  X(u32, stat_splits)     /* splits of MODE 0, merged by MODE 1 */                      \
  X(u32, groups)

#ifdef __cplusplus
#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/dtype.h"
#include "attnbench/param_struct.h"
#include "kv_stages.h"
#include "reference/kvcomp/snapkv_common.h"

namespace attnbench::vulkan::snapkv {

ATTNBENCH_PARAM_STRUCT(ScoresPlan, ATTNBENCH_SNAPKV_SCORES_PLAN);

struct ScoresPush {
  kvcomp::SelectionParams sel;
  kvcomp::SnapkvParams m;
  ScoresPlan plan;
};
static_assert(sizeof(ScoresPush) <= 128, "Vulkan guarantees 128 bytes of push constants");

struct Plan {
  std::string unsupported;  // non-empty: the case cannot run here, and why
  // snapkv_scores: constants {threads, dtype, head_dim, DK, BR, BC, mode, vec}; push per mode.
  std::vector<uint32_t> scores_constants;
  ScoresPush stats{}, sums{};
  uint64_t scores_shared = 0;
  kv::PoolStage pool;
  // Workspaces: (m, l) partials, per-head window sums.
  uint64_t part_ml_bytes = 16, a_part_bytes = 16;
};

Plan make_plan(const kvcomp::SelectionParams& s, const kvcomp::SnapkvParams& m, DType dtype, const DeviceLimits& limits);

}  // namespace attnbench::vulkan::snapkv
#endif  // __cplusplus
#endif
