// The compacted-cache copy every Vulkan KV-compression impl ends with (shaders/kv_gather.comp):
// k_kept and v_kept rows from the k and v rows at kept_idx, bit for bit, zeros beyond the kept
// length. One plan, so snapkv and streaming_llm size it the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/plan_support.h"

namespace attnbench::vulkan {

// The push-constant block of kv_gather.comp, member for member.
struct GatherPush {
  uint32_t budget, kv_len, kept, words;
};

struct GatherPlan {
  std::vector<uint32_t> spec;  // {threads, word bytes, words per row}
  GatherPush push{};
  uint64_t groups = 0;
};

// rows = batch · kv_heads; kept ≤ budget is the same for every row (the shader zeroes the rest).
inline GatherPlan make_gather_plan(uint64_t rows, int64_t kv_len, int64_t budget, int64_t kept, uint64_t row_bytes,
                                   const DeviceView& d) {
  GatherPlan g;
  const uint32_t word = row_bytes % 16 == 0 ? 16 : row_bytes % 4 == 0 ? 4 : 2;  // every dtype is ≥ 2 bytes
  const uint32_t threads = d.workgroup(128);
  g.spec = {threads, word, static_cast<uint32_t>(row_bytes / word)};
  const uint64_t words = rows * static_cast<uint64_t>(budget) * (row_bytes / word);
  g.push = {static_cast<uint32_t>(budget), static_cast<uint32_t>(kv_len), static_cast<uint32_t>(kept),
            static_cast<uint32_t>(words)};
  g.groups = ceil_div(words, threads);
  return g;
}

}  // namespace attnbench::vulkan
