#version 450
// sampling (reference/decoding/sampling.cpp): the decoding family's sampler stage
// (sampler_stage.glsl) and nothing else: PASS 0 finds each row of logits' thresholds, PASS 1
// selects and races each sampled row (or draws its k tokens, or for arithmetic sampling takes a
// sequence through its steps); one workgroup per row.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_memory_scope_semantics : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint PASS = 0u;

#include "param_struct.glsl"
#include "reference/decoding/sampler_common.h"

ATTNBENCH_PARAM_STRUCT(SamplerParams, ATTNBENCH_SAMPLER_FIELDS)

layout(push_constant) uniform Push {
  SamplerParams s;
} pc;

#define SAMPLER_PARAMS pc.s
#include "sampler_stage.glsl"

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  // The finish pass of arithmetic sampling takes a sequence (its steps in order) per workgroup.
  const bool sequences = PASS == 1u && pc.s.arith_codes > 0;
  const uint units = PASS == 0u ? uint(pc.s.prob_rows) : (sequences ? uint(pc.s.rows / pc.s.arith_steps) : uint(pc.s.rows));
  if (row >= units) return;  // whole workgroups
  if (PASS == 0u) sampler_thresholds(row);
  else if (sequences) sampler_arithmetic(row);
  else sampler_finish(row);
}
