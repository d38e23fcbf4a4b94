#version 450
// speculative_sampling, when the vocabulary is raced in several spans: a team of TEAM lanes
// (within one subgroup) per row picks the winner of the spans' winners and writes it at the
// stop position (emitted − 1). If any span found residual mass, only residual races count;
// otherwise every span raced over p (the spec's all-zero fallback). No candidate at all
// (an all-zero p) gives token 0, as the reference does.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TEAM = 4u;  // divides the smallest subgroup size
const bool WIDE = false;

#include "param_struct.glsl"
#include "reference/decoding/speculative_sampling_common.h"
#include "decoding/speculative_sampling_plan.h"
#include "team_reduce.glsl"

ATTNBENCH_PARAM_STRUCT(SpeculativeParams, ATTNBENCH_SPECULATIVE_FIELDS)
ATTNBENCH_PARAM_STRUCT(SpeculativeRacePlan, ATTNBENCH_SPECULATIVE_RACE_PLAN)

layout(binding = 0) readonly buffer SpanBest { uvec4 span_best[]; };  // [R, spans]
layout(binding = 1) readonly buffer Emitted { int emitted[]; };       // [R]
layout(binding = 2) writeonly buffer Tokens { int tokens[]; };        // [R, K+1]

layout(push_constant) uniform Push {
  SpeculativeParams s;
  SpeculativeRacePlan plan;  // groups: this pass's workgroups
} pc;

const uint NO_TOKEN = 0xffffffffu;

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;
  const uint row = wg * (gl_WorkGroupSize.x / TEAM) + team_of_lane();
  const uint lane = team_lane();
  if (row >= uint(pc.s.rows)) return;
  const float neg_inf = uintBitsToFloat(0xff800000u);
  float key_res = neg_inf, key_all = neg_inf;
  uint best_res = NO_TOKEN, best_all = NO_TOKEN, any_res = 0u;
  for (uint s0 = 0u; s0 < pc.plan.spans; s0 += TEAM) {
    const uint s = s0 + lane;
    if (s >= pc.plan.spans) continue;
    const uvec4 e = span_best[row * pc.plan.spans + s];
    const float k = uintBitsToFloat(e.x);
    if (e.z != 0u) {
      any_res = 1u;
      if (race_better(k, e.y, key_res, best_res)) {
        key_res = k;
        best_res = e.y;
      }
    }
    if (race_better(k, e.y, key_all, best_all)) {
      key_all = k;
      best_all = e.y;
    }
  }
  any_res = team_max(any_res);
  team_best(key_res, best_res);
  team_best(key_all, best_all);
  if (lane == 0u) {
    const uint winner = any_res != 0u ? best_res : best_all;
    tokens[row * uint(pc.s.draft_len + 1) + uint(emitted[row] - 1)] = winner == NO_TOKEN ? 0 : int(winner);
  }
}
