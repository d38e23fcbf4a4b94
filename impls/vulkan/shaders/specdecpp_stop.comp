#version 450
// specdecpp's stopping rule (reference/decoding/specdecpp.cpp; the host side in
// decoding/specdecpp_vulkan.cpp): one invocation per row b walks the fp32 prefix product
// P_i = Π_{j≤i} a_j of accept_prob and writes draft_len[b] = the first i ≥ K_min with
// 1 − P_i > γ, else K (at most 64 steps: no need to spread a row over lanes). `precise`, so the
// product and the subtraction round as the CPU's do. The chain stage then reads draft_len.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

#include "param_struct.glsl"
#include "reference/decoding/specdecpp_common.h"

ATTNBENCH_PARAM_STRUCT(SpecDecParams, ATTNBENCH_SPECDECPP_FIELDS)

layout(push_constant) uniform Push {
  SpecDecParams s;
} pc;

layout(binding = 0) readonly buffer Prob { float accept_prob[]; };  // [batch, K]
layout(binding = 1) writeonly buffer Len { int draft_len[]; };      // [batch]

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint b = wg * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (b >= uint(pc.s.batch)) return;
  const int K = pc.s.max_drafts;
  precise float P = 1.0;
  int stop = K;
  for (int i = 1; i < K; ++i) {
    P *= accept_prob[b * uint(K) + uint(i - 1)];
    precise const float risk = 1.0 - P;  // the predicted chance that some draft is rejected
    if (i >= pc.s.min_drafts && risk > pc.s.threshold) {
      stop = i;
      break;
    }
  }
  draft_len[b] = stop;
}
