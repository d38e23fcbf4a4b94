#version 450
// frspec's draft head (reference/decoding/frspec.cpp), three passes chosen by MODE, then the
// verification is speculative_sampling's own shaders:
//   MODE 0  head     a workgroup per subset row j: its lanes take 8-element chunks of the row
//                    (16-byte loads when VEC) and multiply them with 4 hidden states at a time;
//                    the subgroup sums, then shared memory across subgroups, give those logits.
//                    A row is read from memory once; later passes of hidden states find it cached.
//   MODE 1  softmax  a workgroup per hidden state h: the max and its first index (top), the sum of
//                    e = exp((z − max)/T) with the accurate exp, then q = e/sum in subset order and
//                    scattered to the tokens' ids (probs_full; zero elsewhere since the host
//                    cleared it); greedy rows write the one-hot at the first maximum.
//   MODE 2  draft    a workgroup per (row, position): the race over q (race.glsl; U("frspec.draft",
//                    (r·K + t)·V' + j)), the id subset[j]; greedy takes subset[top[h]].
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0u;
layout(constant_id = 2) const uint DTYPE = 0u;
layout(constant_id = 3) const bool VEC = false;  // head and hidden rows start on 16-byte boundaries
layout(constant_id = 4) const uint TEAM = 64u;  // team_reduce.glsl: the workgroup is the team (its size)
const bool WIDE = true;

#include "param_struct.glsl"
#include "reference/decoding/frspec_common.h"
#include "load8.glsl"
#include "race.glsl"
#include "team_reduce.glsl"

ATTNBENCH_PARAM_STRUCT(FrspecParams, ATTNBENCH_FRSPEC_FIELDS)

DECLARE_INPUT(0, head4, head2, head1)        // [V, D]
DECLARE_INPUT(1, hidden4, hidden2, hidden1)  // [chains·K, D]
layout(binding = 2) readonly buffer Subset { int subset[]; };          // [V']
layout(binding = 3) buffer Logits { float logits[]; };                 // [chains·K, V']
layout(binding = 4) buffer Probs { float probs[]; };                   // [chains·K, V']
layout(binding = 5) writeonly buffer ProbsFull { float probs_full[]; };  // [chains·K, V]
layout(binding = 6) buffer Top { uint top[]; };                        // [chains·K]
layout(binding = 7) writeonly buffer Ids { int ids[]; };               // [R, K]

layout(push_constant) uniform Push {
  FrspecParams s;
  uint groups;  // workgroups of the pass
} pc;

DEFINE_LOAD8(load_head, head4, head2, head1)
DEFINE_LOAD8(load_hidden, hidden4, hidden2, hidden1)

shared float sh_sum[4][gl_WorkGroupSize.x];

// The workgroup's sum of v, the same on every lane: the subgroups' sums, then in subgroup order.
float workgroup_sum(float v, uint slot) {
  const float s = subgroupAdd(v);
  if (subgroupElect()) sh_sum[slot][gl_SubgroupID] = s;
  barrier();
  float total = 0.0;
  for (uint g = 0u; g < gl_NumSubgroups; ++g) total += sh_sum[slot][g];
  barrier();
  return total;
}

void head_pass(uint j) {
  const uint D = uint(pc.s.hidden), Vs = uint(pc.s.subset);
  const uint H = uint(pc.s.prob_rows) * uint(pc.s.draft_len);
  const uint row = uint(subset[j]) * D;
  const uint lane = gl_LocalInvocationID.x;
  for (uint h0 = 0u; h0 < H; h0 += 4u) {
    float acc[4] = float[4](0.0, 0.0, 0.0, 0.0);
    for (uint d = 8u * lane; d < D; d += 8u * gl_WorkGroupSize.x) {
      vec4 wl, wh;
      load_head(row + d, D - d, wl, wh);
      for (uint i = 0u; i < 4u; ++i) {
        if (h0 + i >= H) break;
        vec4 xl, xh;
        load_hidden((h0 + i) * D + d, D - d, xl, xh);
        acc[i] = fma(wl.x, xl.x, fma(wl.y, xl.y, fma(wl.z, xl.z, fma(wl.w, xl.w,
                 fma(wh.x, xh.x, fma(wh.y, xh.y, fma(wh.z, xh.z, fma(wh.w, xh.w, acc[i]))))))));
      }
    }
    for (uint i = 0u; i < 4u; ++i) {
      const float total = workgroup_sum(acc[i], i);
      if (lane == 0u && h0 + i < H) logits[(h0 + i) * Vs + j] = total;
    }
  }
}

void softmax_pass(uint h) {
  const uint Vs = uint(pc.s.subset), V = uint(pc.s.vocab), lane = gl_LocalInvocationID.x;
  float m = NEG_INF;
  uint at = 0xffffffffu;
  for (uint j = lane; j < Vs; j += gl_WorkGroupSize.x) {
    const float z = logits[h * Vs + j];
    if (z > m) m = z, at = j;  // j grows: the lane's first maximum
  }
  // The first maximum of the row: the largest value, then the smallest index (team_best's order).
  team_best(m, at);
  if (lane == 0u) top[h] = at;
  if (pc.s.greedy != 0) {
    for (uint j = lane; j < Vs; j += gl_WorkGroupSize.x) {
      const float v = j == at ? 1.0 : 0.0;
      probs[h * Vs + j] = v;
      probs_full[h * V + uint(subset[j])] = v;
    }
    return;
  }
  const float inv_t = pc.s.inv_temperature;
  float sum = 0.0;
  for (uint j = lane; j < Vs; j += gl_WorkGroupSize.x) sum += accurate_exp((logits[h * Vs + j] - m) * inv_t);
  sum = workgroup_sum(sum, 0u);
  for (uint j = lane; j < Vs; j += gl_WorkGroupSize.x) {
    const float v = accurate_exp((logits[h * Vs + j] - m) * inv_t) / sum;
    probs[h * Vs + j] = v;
    probs_full[h * V + uint(subset[j])] = v;
  }
}

uint g_qrow;
float race_log_weight(uint x) {
  const float q = probs[g_qrow + x];
  return q > 0.0 ? accurate_log(q) : ACC_NEG_INF;
}

void draft_pass(uint n) {
  const uint K = uint(pc.s.draft_len), Vs = uint(pc.s.subset);
  const uint r = n / K, t = n % K;
  const uint h = (pc.s.distribution != 0 ? 0u : r) * K + t;
  if (pc.s.greedy != 0) {
    if (gl_LocalInvocationID.x == 0u) ids[n] = subset[top[h]];
    return;
  }
  g_qrow = h * Vs;
  float best_key = ACC_NEG_INF;
  uint best = 0xffffffffu;
  race_span(uvec2(pc.s.seed_lo, pc.s.seed_hi), pc.s.draft_stream, mul_wide(n, Vs), 0u, Vs, gl_LocalInvocationID.x,
            gl_WorkGroupSize.x, best_key, best);
  team_best(best_key, best);
  if (gl_LocalInvocationID.x == 0u) ids[n] = subset[best == 0xffffffffu ? 0u : best];
}

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.groups) return;  // whole workgroups
  if (MODE == 0u) head_pass(wg);
  else if (MODE == 1u) softmax_pass(wg);
  else draft_pass(wg);
}
