// How the Vulkan snapkv kernels are shaped for a case on a device: tile sizes from the device's
// shared memory and workgroup limits, grids, splits and scratch sizes. A pure function of the
// case's shape and the DeviceLimits, so supports() and prepare() agree by construction.
//
// Kernels (impls/vulkan/shaders), in order:
//   snapkv_scores (MODE 0)  per window row and key split: softmax statistics (m, l)
//   snapkv_scores (MODE 1)  per window row block and prefix split: Σ_i P_{h,i,j} per head and key
//   snapkv_pool             mean over the window, pooling, GQA mean: one fp32 score per prefix key
//   snapkv_select           per (batch, KV head): radix select of the top (budget − window), the
//                           window, kept_idx ascending, kept_len
//   kv_gather               k_kept, v_kept at kept_idx, bit for bit; zeros beyond kept_len (kv_gather.h)
// When everything is kept, or the budget is the window alone, only select and gather run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/dtype.h"
#include "kv_gather.h"
#include "reference/kvcomp/snapkv_common.h"

namespace attnbench::vulkan::snapkv {

// The push-constant block of snapkv_scores.comp, member for member.
struct ScoresPush {
  uint32_t batch, q_heads, kv_heads, group;
  uint32_t kv_len, window, prefix;
  uint32_t heads_per_block, rows_per_head, segments, row_blocks;
  uint32_t splits, split_len, stat_splits, groups;
  float scale;
};

struct PoolPush {
  uint32_t group, prefix, segments, chunks, groups;
  float inv_window, inv_group;
};

struct SelectPush {
  uint32_t rows, kv_len, window, budget, prefix, top_k, keep_all;
};

struct Plan {
  std::string unsupported;  // non-empty: the case cannot run here, and why
  bool score = false;       // the scoring kernels run (some prefix tokens are chosen by score)
  // snapkv_scores: spec {threads, dtype, head_dim, DK, BR, BC, mode, vec}; push per mode.
  std::vector<uint32_t> scores_spec;
  ScoresPush stats{}, sums{};
  uint64_t scores_shared = 0;
  std::vector<uint32_t> pool_spec;  // {threads, radius, max}
  PoolPush pool{};
  std::vector<uint32_t> select_spec;  // {threads, E}
  SelectPush select{};
  GatherPlan gather;
  // Scratch: (m, l) partials, per-head window sums, scores.
  uint64_t part_ml_bytes = 16, a_part_bytes = 16, scores_bytes = 16;
  std::string describe() const;
};

Plan make_plan(const kvcomp::SnapkvShape& s, DType dtype, const DeviceLimits& limits);

}  // namespace attnbench::vulkan::snapkv
