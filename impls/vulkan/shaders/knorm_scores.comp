#version 450
// knorm's scores (reference/kvcomp/knorm.cpp): score_j = −√(Σ_x k_{j,x}²) of every candidate of
// every cache row, in fp32, into the family's score buffer [rows, candidates]. LANES consecutive
// invocations share a key: each squares and sums its 8-element chunks of the row (chunk lane,
// lane + LANES, ...), so a workgroup reads one contiguous stretch of K; the key's first lane adds
// the lanes' sums in lane order, so the result does not depend on scheduling.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint D = 128u;    // head_dim
layout(constant_id = 3) const uint LANES = 16u;  // invocations per key: a power of two dividing NT
layout(constant_id = 4) const bool VEC = true;  // D·sizeof(dtype) is a multiple of 16

#include "load8.glsl"
#include "param_struct.glsl"
#include "reference/kvcomp/scored_selection_common.h"
#include "kvcomp/kv_stages.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(ScorePlan, ATTNBENCH_KV_SCORE_PLAN)

const uint NT = gl_WorkGroupSize.x, KEYS = NT / LANES;

DECLARE_INPUT(0, k4, k2, k1)  // k [rows, kv_len, D]
layout(binding = 1) writeonly buffer Scores { float scores[]; };  // [rows, candidates]

layout(push_constant) uniform Push {
  SelectionParams sel;
  ScorePlan plan;
} pc;

DEFINE_LOAD8(load_k, k4, k2, k1)

shared float partial[NT];

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;
  const uint tid = gl_LocalInvocationIndex, lane = tid % LANES;
  const uint C = uint(pc.sel.candidates), T = uint(pc.sel.kv_len);
  const uint key = wg * KEYS + tid / LANES;  // row·C + candidate
  const bool live = key < uint(pc.sel.batch * pc.sel.kv_heads) * C;
  float sum = 0.0;
  if (live) {
    const uint row = key / C, j = uint(pc.sel.sinks) + key % C;
    for (uint x = lane * 8u; x < D; x += LANES * 8u) {
      vec4 lo, hi;
      load_k((row * T + j) * D + x, D - x, lo, hi);
      sum += dot(lo, lo) + dot(hi, hi);
    }
  }
  partial[tid] = sum;
  barrier();
  if (!live || lane != 0u) return;
  float total = 0.0;
  for (uint l = 0u; l < LANES; ++l) total += partial[tid + l];
  scores[key] = -sqrt(total);
}
