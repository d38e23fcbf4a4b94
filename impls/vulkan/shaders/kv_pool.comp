#version 450
// The family's pooling stage (kvcomp/kv_stages.h) for one score row and NT consecutive candidates
// per workgroup, a score row's n heads being the KV head's group or, with one ranking per sequence,
// all its query heads (kvcomp::heads_per_score_row):
//   a_{h,j}      = (Σ_segments raw[(b, h), segment, j]) · pre_scale, or / the window queries that
//                  see the key (visible_window: H2O's mean_visible)
//   pooled_{h,j} = max, or sum / count, of a_{h,j'} over j' ∈ [j − R, j + R] ∩ [0, P)
//   score_j      = (Σ_h pooled_{h,j}) · (1/n), heads in order
// (the SnapKV scorer: the segments are its window's partial sums, pre_scale = 1/obs_window.)
// Each head's window of a (with its R-key halo) is staged in shared memory once. Padded
// positions are ignored by max (−inf) and avg (divided by the in-range count); avg_padded counts
// them as zeros (divided by the kernel, 2R + 1).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint RADIUS = 3u;     // (pool_kernel − 1) / 2
layout(constant_id = 2) const uint POOL_MODE = 1u;  // kvcomp::PoolMode: 0 avg, 1 max, 2 avg_padded
const bool POOL_MAX = POOL_MODE == 1u;

const uint NT = gl_WorkGroupSize.x;

#include "param_struct.glsl"
#include "reference/kvcomp/scored_selection_common.h"
#include "kvcomp/kv_stages.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(PoolPlan, ATTNBENCH_KV_POOL_PLAN)

layout(binding = 0) readonly buffer Raw { float a_part[]; };       // [batch·q_heads, segments, P]
layout(binding = 1) writeonly buffer Scores { float scores[]; };  // [score rows, P]

layout(push_constant) uniform Push {
  SelectionParams sel;
  PoolPlan plan;
} pc;

shared float span[NT + 2u * RADIUS];

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;
  const uint bg = wg / pc.plan.chunks, j0 = (wg % pc.plan.chunks) * NT;
  const uint tid = gl_LocalInvocationIndex, j = j0 + tid, P = uint(pc.sel.candidates);
  const uint G = uint(pc.sel.shared_scores != 0 ? pc.sel.q_heads : pc.sel.group);  // the score row's heads
  const float pad = POOL_MAX ? uintBitsToFloat(0xff800000u) : 0.0;
  float score = 0.0;
  for (uint hh = 0u; hh < G; ++hh) {
    const uint head = (bg * G + hh) * pc.plan.segments;
    barrier();  // the previous head's window is read
    for (uint t = tid; t < NT + 2u * RADIUS; t += NT) {
      const int jj = int(j0 + t) - int(RADIUS);
      float a = pad;
      if (jj >= 0 && jj < int(P)) {
        float sum = 0.0;
        for (uint s = 0u; s < pc.plan.segments; ++s) sum += a_part[(head + s) * P + uint(jj)];
        if (pc.plan.visible_window > 0u) {  // the window queries that see key sinks + jj
          const uint seen = uint(pc.sel.kv_len - pc.sel.sinks - jj);
          a = sum / float(min(pc.plan.visible_window, seen));
        } else {
          a = sum * pc.plan.pre_scale;
        }
      }
      span[t] = a;
    }
    barrier();
    if (j >= P) continue;
    float acc = span[tid];
    for (uint o = 1u; o <= 2u * RADIUS; ++o) acc = POOL_MAX ? max(acc, span[tid + o]) : acc + span[tid + o];
    if (POOL_MODE == 0u) {
      const uint lo = j >= RADIUS ? j - RADIUS : 0u, hi = min(P - 1u, j + RADIUS);
      acc /= float(hi - lo + 1u);
    } else if (POOL_MODE == 2u) {
      acc /= float(2u * RADIUS + 1u);
    }
    score += acc;
  }
  if (j < P) scores[bg * P + j] = score * pc.plan.inv_group;
}
