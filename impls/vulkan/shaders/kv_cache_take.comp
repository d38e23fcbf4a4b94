#version 450
// The selection cache's kept lists (kvcomp/kv_stages.h; semantics: reference/kvcomp/
// selection_cache.h), after kv_select: one workgroup per cache row (batch, KV head), which, where
// its score row hit (cache_hit, from kv_cache_hit), overwrites the row with the cached selection
// around the step's forced tokens: kept_idx = [0, sinks), topk_cached[score row, 0..top_k)
// (ascending), [kv_len − recent, kv_len); −1 beyond sel.kept up to the capacity; kept_len =
// sel.kept. A row that missed keeps kv_select's lists.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

const uint NT = gl_WorkGroupSize.x;

#include "param_struct.glsl"
#include "reference/kvcomp/scored_selection_common.h"
#include "kvcomp/kv_stages.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(CachePlan, ATTNBENCH_KV_CACHE_PLAN)

layout(binding = 0) readonly buffer TopkCached { int topk_cached[]; };  // [score rows, top_k]
layout(binding = 1) readonly buffer Hit { int cache_hit[]; };           // [score rows]
layout(binding = 2) writeonly buffer KeptIdx { int kept_idx[]; };       // [rows, capacity]
layout(binding = 3) writeonly buffer KeptLen { int kept_len[]; };       // [rows]

layout(push_constant) uniform Push {
  SelectionParams sel;
  CachePlan plan;
} pc;

void main() {
  const uint bg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (bg >= uint(pc.sel.batch * pc.sel.kv_heads)) return;
  const uint sr = pc.sel.shared_scores != 0 ? bg / uint(pc.sel.kv_heads) : bg;
  if (cache_hit[sr] == 0) return;  // the workgroup's: uniform
  const uint S = uint(pc.sel.sinks), K = uint(pc.sel.top_k), T = uint(pc.sel.kv_len), kept = uint(pc.sel.kept);
  const uint out_row = bg * uint(pc.sel.capacity);
  for (uint r = gl_LocalInvocationID.x; r < uint(pc.sel.capacity); r += NT) {
    int v = -1;
    if (r < S) v = int(r);
    else if (r < S + K) v = topk_cached[sr * K + (r - S)];
    else if (r < kept) v = int(T - (kept - r));
    kept_idx[out_row + r] = v;
  }
  if (gl_LocalInvocationID.x == 0u) kept_len[bg] = int(kept);
}
