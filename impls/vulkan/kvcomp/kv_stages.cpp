#include "kv_stages.h"

#include <algorithm>

#include "attnbench/error.h"

namespace attnbench::vulkan::kv {

StagesPlan plan_stages(const kvcomp::SelectionParams& s, const DeviceLimits& limits) {
  const DeviceView d(limits);
  StagesPlan p;
  // The gather copies 2-byte words when a row's bytes are not a multiple of 4.
  p.unsupported = missing_feature(limits, {"storage16", "subgroup_basic", "subgroup_arithmetic"}, "the KV-selection stages");
  if (!p.unsupported.empty()) return p;
  const uint64_t rows = kvcomp::cache_rows(s), row_bytes = static_cast<uint64_t>(s.head_dim) * s.elem_bytes;
  p.select_constants = {d.workgroup(256), 4};
  p.select = {s};
  p.select_groups = rows;
  const uint32_t word = row_bytes % 16 == 0 ? 16 : row_bytes % 4 == 0 ? 4 : 2;
  const uint32_t threads = d.workgroup(128);
  p.gather_constants = {threads, word, static_cast<uint32_t>(row_bytes / word)};
  const uint64_t words = rows * static_cast<uint64_t>(s.capacity) * (row_bytes / word);
  p.gather = {s, {static_cast<uint32_t>(words)}};
  p.gather_groups = ceil_div(words, threads);
  if (s.across_heads && kvcomp::scores_needed(s)) {
    p.across = true;
    const uint64_t C = s.candidates, H = s.kv_heads;
    kvcomp::SelectionParams floors = s;  // each row's best `floor`, no forced tokens
    floors.sinks = floors.recent = floors.row_budgets = floors.shared_scores = floors.across_heads = 0;
    floors.top_k = floors.kept = floors.capacity = s.floor;
    kvcomp::SelectionParams seqs = floors;  // one flattened row per sequence
    seqs.kv_heads = 1;
    seqs.group = s.q_heads;
    seqs.candidates = static_cast<int32_t>(H * C);
    seqs.top_k = seqs.kept = seqs.capacity = static_cast<int32_t>(H * s.top_k);
    p.floor_select = {floors};
    p.across_select = {seqs};
    p.floor_groups = s.floor > 0 ? rows : 0;
    p.across_groups = static_cast<uint64_t>(s.batch);
    p.across_threads = d.workgroup(128);
    p.copy_groups = ceil_div(rows * C, p.across_threads);
    p.raise_groups = ceil_div(rows * static_cast<uint64_t>(s.floor), p.across_threads);
    p.count_groups = ceil_div(rows, p.across_threads);
    p.floor_idx_bytes = std::max<uint64_t>(16, rows * s.floor * 4);
    p.across_idx_bytes = std::max<uint64_t>(16, static_cast<uint64_t>(s.batch) * H * s.top_k * 4);
    p.boosted_bytes = std::max<uint64_t>(16, rows * C * 4);
  }
  p.unsupported = over_binding({{"k/v", rows * s.kv_len * row_bytes, 2},
                                {"k_kept/v_kept", s.sparse_step ? 0 : rows * s.capacity * row_bytes, 2},
                                {"the scores", kvcomp::score_rows(s) * static_cast<uint64_t>(s.candidates) * 4, 4}},
                               d);
  return p;
}

PoolStage plan_pool(const kvcomp::SelectionParams& s, uint32_t segments, float pre_scale, int32_t radius, int32_t mode,
                    const DeviceLimits& limits, uint32_t visible_window) {
  const DeviceView d(limits);
  PoolStage p;
  const uint32_t threads = d.workgroup(128);
  if ((uint64_t{threads} + 2 * radius) * 4 > d.shared) {
    p.unsupported = cat("pooling within ", radius, " keys needs ", (threads + 2 * radius) * 4,
                        " bytes of shared memory; the device has ", d.shared);
    return p;
  }
  p.constants = {threads, static_cast<uint32_t>(radius), static_cast<uint32_t>(mode)};
  const uint32_t chunks = ceil_div(std::max<int32_t>(1, s.candidates), threads);
  p.push = {s, {segments, chunks, static_cast<uint32_t>(kvcomp::score_rows(s) * chunks), pre_scale,
                static_cast<float>(1.0 / static_cast<double>(kvcomp::heads_per_score_row(s))), visible_window}};
  p.unsupported = over_binding({{"the raw scores", static_cast<uint64_t>(s.batch) * s.q_heads * segments * s.candidates * 4, 4}}, d);
  return p;
}

}  // namespace attnbench::vulkan::kv
