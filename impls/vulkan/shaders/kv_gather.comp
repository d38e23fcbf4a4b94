#version 450
// The family's compacted cache (kvcomp/kv_stages.h): k_kept and v_kept rows are the k and v rows
// at kept_idx, copied bit for bit in words of WORD bytes (16, 4 or 2: the largest that divides a
// row); positions at or beyond the row's kept_len are zero. One invocation per word of the
// outputs, so neighbouring lanes copy neighbouring words (coalesced on a GPU).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint WORD = 16u;  // bytes per copied word
layout(constant_id = 2) const uint WPR = 16u;   // words per row

#include "param_struct.glsl"
#include "reference/kvcomp/scored_selection_common.h"
#include "kvcomp/kv_stages.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(GatherPlan, ATTNBENCH_KV_GATHER_PLAN)

layout(binding = 0) readonly buffer KeptIdx { int kept_idx[]; };  // [rows, capacity]
layout(binding = 1) readonly buffer KeptLen { int kept_len[]; };  // [rows]
layout(binding = 2) readonly buffer K16 { uvec4 k16[]; };
layout(binding = 2) readonly buffer K4 { uint k4[]; };
layout(binding = 2) readonly buffer K2 { uint16_t k2[]; };
layout(binding = 3) readonly buffer V16 { uvec4 v16[]; };
layout(binding = 3) readonly buffer V4 { uint v4[]; };
layout(binding = 3) readonly buffer V2 { uint16_t v2[]; };
layout(binding = 4) writeonly buffer KK16 { uvec4 kk16[]; };
layout(binding = 4) writeonly buffer KK4 { uint kk4[]; };
layout(binding = 4) writeonly buffer KK2 { uint16_t kk2[]; };
layout(binding = 5) writeonly buffer VK16 { uvec4 vk16[]; };
layout(binding = 5) writeonly buffer VK4 { uint vk4[]; };
layout(binding = 5) writeonly buffer VK2 { uint16_t vk2[]; };

layout(push_constant) uniform Push {
  SelectionParams sel;
  GatherPlan plan;
} pc;

void main() {
  const uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= pc.plan.words) return;
  const uint slot = i / WPR, w = i % WPR;  // slot = bg·capacity + r
  const uint bg = slot / uint(pc.sel.capacity), r = slot % uint(pc.sel.capacity);
  if (r >= uint(kept_len[bg])) {
    if (WORD == 16u) { kk16[i] = uvec4(0u); vk16[i] = uvec4(0u); }
    else if (WORD == 4u) { kk4[i] = 0u; vk4[i] = 0u; }
    else { kk2[i] = uint16_t(0u); vk2[i] = uint16_t(0u); }
    return;
  }
  const uint src = (bg * uint(pc.sel.kv_len) + uint(kept_idx[slot])) * WPR + w;
  if (WORD == 16u) { kk16[i] = k16[src]; vk16[i] = v16[src]; }
  else if (WORD == 4u) { kk4[i] = k4[src]; vk4[i] = v4[src]; }
  else { kk2[i] = k2[src]; vk2[i] = v2[src]; }
}
