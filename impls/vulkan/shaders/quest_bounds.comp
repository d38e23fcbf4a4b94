#version 450
// quest's page bounds (reference/kvcomp/quest.cpp): for every cache row (b, g) and every full page
// p before the current one, U_p = (1/G)·Σ_h Σ_c max(q_{h,c}·kmax_{p,c}, q_{h,c}·kmin_{p,c}) over
// the group's decode queries, in fp32, written page_size times into the family's score buffer
// [rows, candidates] (candidate tokens pP .. pP + P − 1).
//
// A workgroup owns one row and a block of PAGES = NT / LANES consecutive pages. LANES consecutive
// invocations share a page, each reading its 8-element chunks of the page's two summary rows
// (chunk lane, lane + LANES, ...), so a workgroup reads one contiguous stretch of kmin and of kmax,
// each element once. The group's queries are staged in shared memory as fp32, HS heads at a time
// (all of them unless G·head_dim is large), and serve every page of the block. Each invocation
// sums its chunks and heads in turn; the page's first lane adds the lanes' sums in lane order, so
// the result does not depend on scheduling. Then the whole workgroup writes the block's
// PAGES·page_size scores, contiguous in the buffer.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint D = 128u;    // head_dim
layout(constant_id = 3) const uint LANES = 16u;  // invocations per page: a power of two dividing NT
layout(constant_id = 4) const uint HS = 1u;     // query heads staged in shared memory at a time
layout(constant_id = 5) const bool VEC = true;  // D·sizeof(dtype) is a multiple of 16

#include "load8.glsl"
#include "param_struct.glsl"
#include "reference/kvcomp/quest_common.h"
#include "kvcomp/quest_plan.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(QuestParams, ATTNBENCH_QUEST_FIELDS)
ATTNBENCH_PARAM_STRUCT(BoundsPlan, ATTNBENCH_QUEST_BOUNDS_PLAN)

const uint NT = gl_WorkGroupSize.x, PAGES = NT / LANES;
const uint CHUNKS = (D + 7u) / 8u, DP = CHUNKS * 8u;  // a staged query row: D floats, zero-padded

DECLARE_INPUT(0, q4, q2, q1)      // q [batch·q_heads, D]: the decode queries
DECLARE_INPUT(1, lo4, lo2, lo1)   // kmin [rows, pages, D]
DECLARE_INPUT(2, hi4, hi2, hi1)   // kmax [rows, pages, D]
layout(binding = 3) writeonly buffer Scores { float scores[]; };  // [rows, candidates]

layout(push_constant) uniform Push {
  SelectionParams sel;
  QuestParams m;
  BoundsPlan plan;
} pc;

DEFINE_LOAD8(load_q, q4, q2, q1)
DEFINE_LOAD8(load_lo, lo4, lo2, lo1)
DEFINE_LOAD8(load_hi, hi4, hi2, hi1)

shared vec4 Qs[HS * DP / 4u];
shared float partial[NT];
shared float bound[PAGES];

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;  // the whole workgroup: no barrier is left waiting
  const uint tid = gl_LocalInvocationIndex, lane = tid % LANES;
  const uint G = uint(pc.sel.group), P = uint(pc.m.page_size), full = uint(pc.sel.candidates) / P;
  const uint row = wg / pc.plan.blocks, p0 = wg % pc.plan.blocks * PAGES, p = p0 + tid / LANES;
  const bool live = p < full;
  const uint summary = (row * uint(pc.m.pages) + p) * D;

  vec4 acc = vec4(0.0);
  for (uint h0 = 0u; h0 < G; h0 += HS) {
    const uint hs = min(HS, G - h0);
    barrier();  // the previous stage's queries are read
    for (uint e = tid; e < hs * CHUNKS; e += NT) {
      const uint h = e / CHUNKS, x = e % CHUNKS * 8u;
      vec4 a, b;
      load_q((row * G + h0 + h) * D + x, D - x, a, b);  // query head b·q_heads + g·G + h0 + h
      Qs[(h * DP + x) / 4u] = a;
      Qs[(h * DP + x) / 4u + 1u] = b;
    }
    barrier();
    if (live) {
      for (uint x = lane * 8u; x < D; x += LANES * 8u) {
        vec4 l0, l1, u0, u1;
        load_lo(summary + x, D - x, l0, l1);
        load_hi(summary + x, D - x, u0, u1);
        for (uint h = 0u; h < hs; ++h) {
          const vec4 qa = Qs[(h * DP + x) / 4u], qb = Qs[(h * DP + x) / 4u + 1u];
          acc += max(qa * u0, qa * l0) + max(qb * u1, qb * l1);
        }
      }
    }
  }
  partial[tid] = (acc.x + acc.y) + (acc.z + acc.w);
  barrier();
  if (live && lane == 0u) {
    float total = 0.0;
    for (uint l = 0u; l < LANES; ++l) total += partial[tid + l];
    bound[tid / LANES] = total * pc.m.inv_group;
  }
  barrier();
  const uint n = min(PAGES, full - p0) * P;  // p0 < full: the grid holds no empty block
  const uint first = row * uint(pc.sel.candidates) + p0 * P;
  for (uint e = tid; e < n; e += NT) scores[first + e] = bound[e / P];
}
