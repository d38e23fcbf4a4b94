#version 450
// AdaKV's budgets across a sequence's KV heads (kvcomp/kv_stages.h; semantics: the across_heads
// fields of reference/kvcomp/scored_selection_common.h), the two small steps around kv_select:
//   MODE 0  boosted = scores [rows, C]
//   MODE 1  each row's floor (its best `floor` candidates, which kv_select wrote to floor_idx
//           [rows, floor]) raised to +inf in boosted, so they count first
//   MODE 2  from the best kv_heads·top_k of each sequence's boosted scores (kv_select over one
//           flattened row per sequence wrote their flat indices g·C + j to across_idx), row
//           (b, g)'s budget = sinks + recent + how many fall in [g·C, (g + 1)·C)
// One invocation per score element (0), floor entry (1) or cache row (2): no order to depend on.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0u;

#include "param_struct.glsl"
#include "reference/kvcomp/scored_selection_common.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)

layout(binding = 0) readonly buffer Scores { float scores[]; };    // [rows, C]
layout(binding = 1) readonly buffer Chosen { int chosen[]; };      // MODE 1: floor_idx; MODE 2: across_idx
layout(binding = 2) buffer Boosted { float boosted[]; };            // [rows, C]
layout(binding = 3) writeonly buffer RowBudget { int row_budget[]; };  // [rows]

layout(push_constant) uniform Push {
  SelectionParams sel;
} pc;

// The first of chosen[base, base + n) (ascending) not below v, as an offset (n if none).
uint lower_bound(uint base, uint n, uint v) {
  uint lo = 0u, hi = n;
  while (lo < hi) {
    const uint mid = (lo + hi) / 2u;
    if (uint(chosen[base + mid]) < v) lo = mid + 1u;
    else hi = mid;
  }
  return lo;
}

void main() {
  const uint id = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
  const uint H = uint(pc.sel.kv_heads), C = uint(pc.sel.candidates), rows = uint(pc.sel.batch) * H;
  const uint F = uint(pc.sel.floor), K = uint(pc.sel.top_k);
  if (MODE == 0u) {
    if (id < rows * C) boosted[id] = scores[id];
    return;
  }
  if (MODE == 1u) {
    if (id < rows * F) boosted[(id / F) * C + uint(chosen[id])] = uintBitsToFloat(0x7f800000u);
    return;
  }
  if (id >= rows) return;
  const uint b = id / H, g = id % H, n = H * K, base = b * n;
  // across_idx is ascending per sequence: row g's flat indices are the run between two binary
  // searches (a loop over all n would run past lavapipe's shader loop limit at long prompts).
  row_budget[id] = pc.sel.sinks + pc.sel.recent + int(lower_bound(base, n, (g + 1u) * C) - lower_bound(base, n, g * C));
}
