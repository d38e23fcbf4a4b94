#version 450
// specdecpp's acceptance head, head=linear (reference/decoding/specdecpp.cpp; the host side in
// decoding/specdecpp_vulkan.cpp): one workgroup per (row, step) n = b·K + i computes
//   a_i = 1/(1 + e^(z0 − z1)),  z_c = acc_bias[c] + Σ_j acc_weight[c, j]·hidden[b, i, j]
// and a_1 = 1 (position 0, the skipped first step). Lanes stride over the hidden size, each keeping
// both fp32 sums in order; a shared-memory tree (no subgroup operation, so any subgroup size)
// joins them in a fixed order, so a rerun gives the same bits. e^x is accurate_exp (GLSL's exp
// may be 3 + 2|x| ulp off).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

const uint T = gl_WorkGroupSize.x;  // a power of two (the host's plan)

#include "accurate_math.glsl"
#include "param_struct.glsl"
#include "reference/decoding/specdecpp_common.h"

ATTNBENCH_PARAM_STRUCT(SpecDecParams, ATTNBENCH_SPECDECPP_FIELDS)

layout(push_constant) uniform Push {
  SpecDecParams s;
} pc;

layout(binding = 0) readonly buffer Hidden { float hidden[]; };   // [batch, K, D]
layout(binding = 1) readonly buffer Weight { float weight[]; };   // [2, D]
layout(binding = 2) readonly buffer Bias { float bias[]; };       // [2]
layout(binding = 3) writeonly buffer Prob { float accept_prob[]; };  // [batch, K]

shared float sh_z0[T];
shared float sh_z1[T];

void main() {
  const uint n = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint K = uint(pc.s.max_drafts), D = uint(pc.s.hidden);
  if (n >= uint(pc.s.batch) * K) return;  // whole workgroups: barriers stay uniform
  const uint lane = gl_LocalInvocationID.x;
  if (n % K == 0u) {
    if (lane == 0u) accept_prob[n] = 1.0;
    return;
  }
  const uint h = n * D;
  precise float z0 = 0.0, z1 = 0.0;
  for (uint j = lane; j < D; j += T) {
    const float x = hidden[h + j];
    z0 += weight[j] * x;
    z1 += weight[D + j] * x;
  }
  sh_z0[lane] = z0;
  sh_z1[lane] = z1;
  barrier();
  for (uint s = T / 2u; s > 0u; s >>= 1u) {
    if (lane < s) {
      precise const float a0 = sh_z0[lane] + sh_z0[lane + s], a1 = sh_z1[lane] + sh_z1[lane + s];
      sh_z0[lane] = a0;
      sh_z1[lane] = a1;
    }
    barrier();
  }
  if (lane == 0u) {
    precise const float l0 = bias[0] + sh_z0[0], l1 = bias[1] + sh_z1[0];
    precise const float a = 1.0 / (1.0 + accurate_exp(l0 - l1));
    accept_prob[n] = a;
  }
}
