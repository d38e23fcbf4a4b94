// How the Vulkan chain verification kernels (speculative_sampling, specdecpp) are shaped for a case
// on a device (shaders/speculative_sampling_race.comp, speculative_sampling_finalize.comp): a pure
// function of the case's shape and the DeviceLimits, so supports() and prepare() agree by construction.
//
// A team of lanes verifies one row and races one span of its vocabulary:
//   narrow  a small vocabulary (at most four Philox blocks of four tokens per lane of one
//           subgroup): TEAM lanes of one subgroup per row, reductions by shuffles, many rows per
//           workgroup — the distribution mode's 40000 rows of 16 tokens;
//   wide    the workgroup per (row, span), reductions by subgroup arithmetic and shared memory;
//           the vocabulary is cut into spans when rows alone leave the device idle, and a
//           finalize pass picks each row's winner among its spans.
// The plan fields of the push blocks are read by glslc too: ASCII list, C++ inside __cplusplus.
#ifndef ATTNBENCH_VULKAN_SPECULATIVE_SAMPLING_PLAN_H
#define ATTNBENCH_VULKAN_SPECULATIVE_SAMPLING_PLAN_H

#define ATTNBENCH_SPECULATIVE_RACE_PLAN(X)                                  \
  X(u32, spans)    /* vocabulary spans per row */                    \
  X(u32, span_len) /* tokens per span, a multiple of 4 */            \
  X(u32, groups)   /* the pass's workgroups */

#ifdef __cplusplus
#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/param_struct.h"
#include "reference/decoding/speculative_sampling_common.h"

namespace attnbench::vulkan::speculative {

ATTNBENCH_PARAM_STRUCT(SpeculativeRacePlan, ATTNBENCH_SPECULATIVE_RACE_PLAN);

// The push-constant blocks of speculative_sampling_race.comp and _finalize.comp.
struct Push {
  decoding::SpeculativeParams s;
  SpeculativeRacePlan plan;
};

struct Plan {
  std::string unsupported;  // non-empty: the case cannot run here, and why
  uint32_t threads = 0;     // race workgroup size
  uint32_t team = 0;        // lanes per (row, span)
  bool wide = false;
  uint32_t spans = 1, span_len = 0;
  uint64_t race_groups = 0;
  uint32_t finalize_threads = 0, finalize_team = 0;
  uint64_t finalize_groups = 0;  // 0: one span, no finalize pass
};

Plan plan_race(const decoding::SpeculativeParams& s, const DeviceLimits& limits);

}  // namespace attnbench::vulkan::speculative
#endif  // __cplusplus
#endif
