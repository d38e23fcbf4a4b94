#include "kv_stages.h"

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
  p.unsupported = over_binding({{"k/v", rows * s.kv_len * row_bytes, 2},
                                {"k_kept/v_kept", rows * s.capacity * row_bytes, 2},
                                {"the scores", kvcomp::score_rows(s) * static_cast<uint64_t>(s.candidates) * 4, 4}},
                               d);
  return p;
}

PoolStage plan_pool(const kvcomp::SelectionParams& s, uint32_t segments, float pre_scale, int32_t radius, bool is_max,
                    const DeviceLimits& limits) {
  const DeviceView d(limits);
  PoolStage p;
  const uint32_t threads = d.workgroup(128);
  if ((uint64_t{threads} + 2 * radius) * 4 > d.shared) {
    p.unsupported = cat("pooling within ", radius, " keys needs ", (threads + 2 * radius) * 4,
                        " bytes of shared memory; the device has ", d.shared);
    return p;
  }
  p.constants = {threads, static_cast<uint32_t>(radius), is_max ? 1u : 0u};
  const uint32_t chunks = ceil_div(std::max<int32_t>(1, s.candidates), threads);
  p.push = {s, {segments, chunks, static_cast<uint32_t>(kvcomp::cache_rows(s) * chunks), pre_scale,
                static_cast<float>(1.0 / static_cast<double>(s.group))}};
  p.unsupported = over_binding({{"the raw scores", static_cast<uint64_t>(s.batch) * s.q_heads * segments * s.candidates * 4, 4}}, d);
  return p;
}

}  // namespace attnbench::vulkan::kv
