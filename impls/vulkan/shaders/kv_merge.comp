#version 450
// The family's merged slots (kvcomp/kv_stages.h; the contract: reference/kvcomp/merged_slots.h):
// row r's evicted tokens — every token not in kept_idx — in ascending order, cut into M contiguous
// groups (the first (evicted mod M) one token longer); slot m gets the group's mean key and value
// (fp32 sums in token order, divided by the size, rounded to the dtype) and its size as weight;
// an empty group zeros and weight 0.
//
// One workgroup per (row, slot), lanes over the head dimension (CPT channels each, strided by the
// workgroup size). The group's tokens are taken a chunk of NT at a time: lane t finds the token of
// evicted rank e = e0 + c + t by binary search over the row's ascending kept list — the kept tokens
// before it are those with kept_idx[i] − i ≤ e (kept_idx[i] − i counts the evicted tokens below
// kept token i, non-decreasing in i), so the token is e plus their count — and writes it to shared
// memory; then every lane adds the chunk's rows in order. A pass adds tokens [pass_begin,
// pass_begin + pass_len) of each group (one pass, unless a loop cap or vulkan.splits cuts long
// groups): a pass that is not the first resumes the running sums from the workspace, one that is
// not the last stores them back, so the order of every sum is the tokens' order in any case.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint CPT = 1u;  // channels per lane: ceil(head_dim / NT)

#include "dtype.glsl"
#include "param_struct.glsl"
#include "reference/kvcomp/scored_selection_common.h"
#include "kvcomp/kv_stages.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(MergePlan, ATTNBENCH_KV_MERGE_PLAN)

const uint NT = gl_WorkGroupSize.x;

layout(binding = 0) readonly buffer KeptIdx { int kept_idx[]; };  // [rows, capacity], ascending
layout(binding = 1) readonly buffer KeptLen { int kept_len[]; };  // [rows]
layout(binding = 2) readonly buffer K32 { float k32[]; };         // k [rows, kv_len, head_dim]
layout(binding = 2) readonly buffer K16 { uint16_t k16[]; };
layout(binding = 3) readonly buffer V32 { float v32[]; };
layout(binding = 3) readonly buffer V16 { uint16_t v16[]; };
layout(binding = 4) writeonly buffer KM32 { float km32[]; };      // k_merged [rows, M, head_dim]
layout(binding = 4) writeonly buffer KM16 { uint16_t km16[]; };
layout(binding = 5) writeonly buffer VM32 { float vm32[]; };      // v_merged [rows, M, head_dim]
layout(binding = 5) writeonly buffer VM16 { uint16_t vm16[]; };
layout(binding = 6) writeonly buffer WM { float w_merged[]; };    // [rows, M]
layout(binding = 7) buffer Sums { float sums[]; };                // between passes: [rows·M, 2, head_dim]

layout(push_constant) uniform Push {
  SelectionParams sel;
  MergePlan plan;
} pc;

shared uint toks[NT];

float widen(uint16_t h) { return DTYPE == DT_BF16 ? bf16_bits_to_f32(uint(h)) : f16_bits_to_f32(uint(h)); }

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;
  const uint M = pc.plan.slots, row = wg / M, m = wg % M;
  const uint T = uint(pc.sel.kv_len), D = uint(pc.sel.head_dim), cap = uint(pc.sel.capacity);
  const uint n = min(uint(max(kept_len[row], 0)), min(cap, T));
  const uint evicted = T - n, q = evicted / M, rem = evicted % M;
  const uint len = q + (m < rem ? 1u : 0u);
  const uint e0 = m * q + min(m, rem);  // the group's first evicted rank
  const uint lo = min(pc.plan.pass_begin, len), hi = min(len, pc.plan.pass_begin + pc.plan.pass_len);
  const uint tid = gl_LocalInvocationID.x;

  float sk[CPT], sv[CPT];
  for (uint c = 0u; c < CPT; ++c) {
    const uint x = tid + c * NT;
    const bool resume = pc.plan.first == 0u && x < D;
    sk[c] = resume ? sums[(wg * 2u) * D + x] : 0.0;
    sv[c] = resume ? sums[(wg * 2u + 1u) * D + x] : 0.0;
  }

  const uint idx0 = row * cap, kv0 = row * T;
  for (uint c0 = lo; c0 < hi; c0 += NT) {
    const uint cnt = min(NT, hi - c0);
    barrier();  // the previous chunk's tokens are read
    if (tid < cnt) {
      const uint e = e0 + c0 + tid;
      uint a = 0u, b = n;  // the first kept index i with kept_idx[i] − i > e
      while (a < b) {
        const uint mid = (a + b) / 2u;
        if (uint(kept_idx[idx0 + mid]) - mid <= e) a = mid + 1u;
        else b = mid;
      }
      toks[tid] = e + a;
    }
    barrier();
    for (uint i = 0u; i < cnt; ++i) {
      const uint src = (kv0 + toks[i]) * D;
      for (uint c = 0u; c < CPT; ++c) {
        const uint x = tid + c * NT;
        if (x >= D) break;
        if (DTYPE == DT_F32) {
          sk[c] += k32[src + x];
          sv[c] += v32[src + x];
        } else {
          sk[c] += widen(k16[src + x]);
          sv[c] += widen(v16[src + x]);
        }
      }
    }
  }

  if (pc.plan.last == 0u) {
    for (uint c = 0u; c < CPT; ++c) {
      const uint x = tid + c * NT;
      if (x >= D) break;
      sums[(wg * 2u) * D + x] = sk[c];
      sums[(wg * 2u + 1u) * D + x] = sv[c];
    }
    return;
  }
  const float size = float(len);
  for (uint c = 0u; c < CPT; ++c) {
    const uint x = tid + c * NT, dst = wg * D + x;
    if (x >= D) break;
    const float mk = len > 0u ? sk[c] / size : 0.0, mv = len > 0u ? sv[c] / size : 0.0;
    if (DTYPE == DT_F32) {
      km32[dst] = mk;
      vm32[dst] = mv;
    } else {
      km16[dst] = uint16_t(f32_to_storage16(mk, DTYPE));
      vm16[dst] = uint16_t(f32_to_storage16(mv, DTYPE));
    }
  }
  if (tid == 0u) w_merged[wg] = size;
}
