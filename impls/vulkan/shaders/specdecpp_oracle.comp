#version 450
// specdecpp's acceptance head, head=oracle (reference/decoding/specdecpp.cpp; the host side in
// decoding/specdecpp_vulkan.cpp): one workgroup per (row, step) n = b·K + i computes
//   a_i = Σ_x min(p_i(x), q_i(x))  (target_probs[b, i], draft_probs[b, i])
// and a_1 = 1 (position 0). Each fp32 term is exact and summed in fp64, as the spec requires:
// lanes stride over the vocabulary (four loads in flight per lane), then a shared-memory tree in
// a fixed order (no subgroup operation: any subgroup size, no fp64 subgroup arithmetic needed).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

const uint T = gl_WorkGroupSize.x;  // a power of two (the host's plan)

#include "param_struct.glsl"
#include "reference/decoding/specdecpp_common.h"

ATTNBENCH_PARAM_STRUCT(SpecDecParams, ATTNBENCH_SPECDECPP_FIELDS)

layout(push_constant) uniform Push {
  SpecDecParams s;
} pc;

layout(binding = 0) readonly buffer Target { float target[]; };  // [batch, K+1, V]
layout(binding = 1) readonly buffer Draft { float draft[]; };    // [batch, K, V]
layout(binding = 2) writeonly buffer Prob { float accept_prob[]; };  // [batch, K]

shared double sh_sum[T];

double term(uint p, uint q) { return double(min(target[p], draft[q])); }

void main() {
  const uint n = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint K = uint(pc.s.max_drafts), V = uint(pc.s.vocab);
  if (n >= uint(pc.s.batch) * K) return;  // whole workgroups: barriers stay uniform
  const uint lane = gl_LocalInvocationID.x;
  const uint b = n / K, i = n % K;
  if (i == 0u) {
    if (lane == 0u) accept_prob[n] = 1.0;
    return;
  }
  const uint prow = (b * (K + 1u) + i) * V, qrow = n * V;
  double sum = 0.0lf;
  uint x = lane;
  for (; x + 3u * T < V; x += 4u * T)
    sum += (term(prow + x, qrow + x) + term(prow + x + T, qrow + x + T)) +
           (term(prow + x + 2u * T, qrow + x + 2u * T) + term(prow + x + 3u * T, qrow + x + 3u * T));
  for (; x < V; x += T) sum += term(prow + x, qrow + x);
  sh_sum[lane] = sum;
  barrier();
  for (uint s = T / 2u; s > 0u; s >>= 1u) {
    if (lane < s) sh_sum[lane] += sh_sum[lane + s];
    barrier();
  }
  if (lane == 0u) accept_prob[n] = float(sh_sum[0]);
}
