#version 450
// lessismore's logits (reference/kvcomp/lessismore.cpp; the steps: lessismore_common.h): for every
// query head h of every sequence b and every candidate j, the raw P[b·q_heads + h, j] = q_h·k_{g,j}
// (g = h / group, no scale) in fp32, with K read once per KV head for its group's queries; beside
// each logit, the head's rank of the candidate starts as "none" (0xffffffff) for the rank pass.
//
// A workgroup owns one cache row (b, g) and a block of KEYS = NT / LANES consecutive candidates.
// LANES consecutive invocations share a key, each reading its 8-element chunks of the row (chunk
// lane, lane + LANES, ...), so a workgroup reads one contiguous stretch of K (on a CPU device
// LANES is 1: an invocation walks its key's row, no reduction). The group's queries
// are staged in shared memory as fp32, HS heads at a time, and every invocation keeps a sum per
// staged head; the key's first lane adds the lanes' sums in lane order, so the result does not
// depend on scheduling.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint D = 128u;     // head_dim
layout(constant_id = 3) const uint LANES = 16u;  // invocations per key: a power of two dividing NT
layout(constant_id = 4) const uint HS = 1u;      // query heads staged at a time
layout(constant_id = 5) const bool VEC = true;   // D·sizeof(dtype) is a multiple of 16

#include "load8.glsl"
#include "param_struct.glsl"
#include "reference/kvcomp/scored_selection_common.h"
#include "kvcomp/kv_stages.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(ScorePlan, ATTNBENCH_KV_SCORE_PLAN)

const uint NT = gl_WorkGroupSize.x, KEYS = NT / LANES;
const uint CHUNKS = (D + 7u) / 8u, DP = CHUNKS * 8u;  // a staged query row: D floats, zero-padded

DECLARE_INPUT(0, q4, q2, q1)  // q [batch·q_heads, D]: the decode queries
DECLARE_INPUT(1, k4, k2, k1)  // k [batch·kv_heads, kv_len, D]
layout(binding = 2) writeonly buffer Logits { float logits[]; };  // [batch·q_heads, candidates]
layout(binding = 3) writeonly buffer Ranks { uint ranks[]; };     // [batch·q_heads, candidates]

layout(push_constant) uniform Push {
  SelectionParams sel;
  ScorePlan plan;
} pc;

DEFINE_LOAD8(load_q, q4, q2, q1)
DEFINE_LOAD8(load_k, k4, k2, k1)

shared vec4 Qs[HS * DP / 4u];
shared float partial[LANES > 1u ? HS * NT : 1u];

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;  // the whole workgroup: no barrier is left waiting
  const uint tid = gl_LocalInvocationIndex, lane = tid % LANES;
  const uint G = uint(pc.sel.group), C = uint(pc.sel.candidates), blocks = (C + KEYS - 1u) / KEYS;
  const uint row = wg / blocks, j = wg % blocks * KEYS + tid / LANES;  // row = b·kv_heads + g
  const bool live = j < C;
  const uint key = (row * uint(pc.sel.kv_len) + uint(pc.sel.sinks) + j) * D;

  for (uint h0 = 0u; h0 < G; h0 += HS) {
    const uint hs = min(HS, G - h0);
    barrier();  // the previous stage's queries and sums are read
    for (uint e = tid; e < hs * CHUNKS; e += NT) {
      const uint h = e / CHUNKS, x = e % CHUNKS * 8u;
      vec4 a, b;
      load_q((row * G + h0 + h) * D + x, D - x, a, b);  // query head b·q_heads + g·G + h0 + h
      Qs[(h * DP + x) / 4u] = a;
      Qs[(h * DP + x) / 4u + 1u] = b;
    }
    barrier();
    float acc[HS];
    for (uint h = 0u; h < HS; ++h) acc[h] = 0.0;
    if (live) {
      for (uint x = lane * 8u; x < D; x += LANES * 8u) {
        vec4 lo, hi;
        load_k(key + x, D - x, lo, hi);
        for (uint h = 0u; h < hs; ++h) acc[h] += dot(Qs[(h * DP + x) / 4u], lo) + dot(Qs[(h * DP + x) / 4u + 1u], hi);
      }
    }
    if (LANES > 1u) {  // the lanes' sums, added in lane order by the key's first lane
      for (uint h = 0u; h < hs; ++h) partial[h * NT + tid] = acc[h];
      barrier();
      if (lane == 0u)
        for (uint h = 0u; h < hs; ++h) {
          acc[h] = 0.0;
          for (uint l = 0u; l < LANES; ++l) acc[h] += partial[h * NT + tid + l];
        }
    }
    if (live && lane == 0u)
      for (uint h = 0u; h < hs; ++h) {
        logits[(row * G + h0 + h) * C + j] = acc[h];
        ranks[(row * G + h0 + h) * C + j] = 0xffffffffu;
      }
  }
}
