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

MergeStage plan_merge(const kvcomp::SelectionParams& s, int64_t slots, DType dtype, const DeviceLimits& limits) {
  const DeviceView d(limits);
  MergeStage p;
  p.unsupported = missing_feature(limits, {"storage16"}, "the merge stage");
  if (!p.unsupported.empty()) return p;
  ATTNBENCH_ASSERT(slots > 0, "plan_merge() for a method that merges nothing");
  const uint32_t D = static_cast<uint32_t>(std::max(s.head_dim, 1));
  // Lanes over the head dimension, up to 128, each lane summing every threads-th channel.
  const uint32_t threads = d.workgroup(std::min(pow2_ceil(D), 128u)), per_lane = ceil_div(D, threads);
  p.constants = {threads, dtype_code(dtype), per_lane};
  const uint64_t rows = kvcomp::cache_rows(s);
  p.groups = rows * static_cast<uint64_t>(slots);
  // The longest group: the evicted tokens (every token but the forced ones, at most) over M.
  const uint64_t forced = std::min<int64_t>(int64_t{s.sinks} + s.recent, s.kv_len);
  const uint32_t longest = std::max(1u, ceil_div(static_cast<uint64_t>(s.kv_len) - forced, static_cast<uint64_t>(slots)));
  // Loop iterations per chunk of `threads` tokens: the chunk loop, each lane's binary search over
  // kept_idx (at most 1 + log2(capacity) steps) and the token loop with its channel loop.
  uint32_t search = 1;
  while ((uint64_t{1} << search) <= static_cast<uint64_t>(std::max(s.capacity, 1))) ++search;
  const uint32_t cap_len = keys_within_loop_cap(d, 1 + search + uint64_t{threads} * (1 + per_lane), threads);
  uint32_t pass_len = d.forced_splits > 0 ? ceil_div(longest, d.forced_splits) : longest;
  if (cap_len > 0) pass_len = std::min(pass_len, cap_len);
  const uint32_t passes = ceil_div(longest, pass_len);
  for (uint32_t i = 0; i < passes; ++i)
    p.passes.push_back({s, {static_cast<uint32_t>(slots), static_cast<uint32_t>(p.groups), i * pass_len, pass_len,
                            i == 0 ? 1u : 0u, i + 1 == passes ? 1u : 0u}});
  if (passes > 1) p.sums_bytes = p.groups * 2 * D * 4;
  const uint64_t es = dtype_size(dtype);
  p.unsupported = over_binding({{"k_merged/v_merged", p.groups * D * es, es},
                                {"the merge's running sums", p.sums_bytes, 4}},
                               d);
  return p;
}

CacheStage plan_cache(const kvcomp::SelectionParams& s, DType dtype, float threshold, const DeviceLimits& limits) {
  const DeviceView d(limits);
  CacheStage p;
  p.unsupported = missing_feature(limits, {"storage16"}, "the selection cache's stages");
  if (!p.unsupported.empty()) return p;
  // The cosine's lanes: a power of two (the tree), at most a row's values rounded up to one.
  const uint64_t n = static_cast<uint64_t>(kvcomp::heads_per_score_row(s)) * s.head_dim;
  const uint32_t threads = d.workgroup(std::min<uint32_t>(pow2_ceil(static_cast<uint32_t>(std::max<uint64_t>(n, 1))), 256));
  p.hit_constants = {threads, dtype_code(dtype)};
  p.take_constants = {d.workgroup(128)};
  p.push = {s, {threshold}};
  p.hit_groups = kvcomp::score_rows(s);
  p.take_groups = kvcomp::cache_rows(s);
  const uint64_t es = dtype_size(dtype);
  p.unsupported = over_binding({{"q/q_cached", kvcomp::score_rows(s) * n * es, es},
                                {"topk_cached", kvcomp::score_rows(s) * static_cast<uint64_t>(s.top_k) * 4, 4}},
                               d);
  return p;
}

}  // namespace attnbench::vulkan::kv
