#version 450
// Second pass of kivi_decode.comp when it splits the keys: combines each query row's split
// partials (m_s, l_s, unnormalised O_s) into O and LSE, as attention_merge.comp does,
//   M = max_s m_s,  L = Σ_s e^(m_s − M)·l_s,  O = Σ_s e^(m_s − M)·O_s / L,  LSE = M + log L,
// over the splits that hold keys of the row's sequence (the others wrote nothing). A row whose
// sequence is empty gets O = 0 and LSE = −inf. One workgroup per query row, lanes over channels.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 2u;  // dtype.glsl: 1 f16, 2 bf16
layout(constant_id = 2) const uint D = 128u;    // head_dim

#include "dtype.glsl"
#include "param_struct.glsl"
#include "reference/kvcomp/kivi_common.h"
#include "kvcomp/kivi_decode_plan.h"

ATTNBENCH_PARAM_STRUCT(KiviParams, ATTNBENCH_KIVI_FIELDS)
ATTNBENCH_PARAM_STRUCT(KiviDecodePlan, ATTNBENCH_VK_KIVI_DECODE_PLAN)

layout(push_constant) uniform Push {
  KiviParams s;
  KiviDecodePlan plan;
} pc;

layout(binding = 0) readonly buffer KvLen { int kv_len[]; };      // [batch]
layout(binding = 1) writeonly buffer O16 { uint16_t o2[]; };      // [batch, q_heads, 1, D]
layout(binding = 2) writeonly buffer Lse { float lse[]; };        // [batch, q_heads, 1]
layout(binding = 3) readonly buffer PartMl { vec2 part_ml[]; };   // [batch·q_heads, splits]
layout(binding = 4) readonly buffer PartO { float part_o[]; };    // [batch·q_heads, splits, D]

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= uint(pc.s.batch) * uint(pc.s.q_heads)) return;
  const uint len = uint(clamp(kv_len[row / uint(pc.s.q_heads)], 0, pc.s.kv_cap));
  const uint splits = pc.plan.splits, used = min(splits, (len + pc.plan.split_len - 1u) / pc.plan.split_len);
  float mx = NEG_INF;
  for (uint s = 0u; s < used; ++s) mx = max(mx, part_ml[row * splits + s].x);
  float total = 0.0;
  for (uint s = 0u; s < used; ++s) {
    const vec2 ml = part_ml[row * splits + s];
    total += ml.y * exp2((ml.x - mx) * LOG2E);
  }
  for (uint x = gl_LocalInvocationIndex; x < D; x += gl_WorkGroupSize.x) {
    float o = 0.0;
    for (uint s = 0u; s < used; ++s) o += exp2((part_ml[row * splits + s].x - mx) * LOG2E) * part_o[(row * splits + s) * D + x];
    o = total == 0.0 ? 0.0 : o / total;
    o2[row * D + x] = uint16_t(f32_to_storage16(o, DTYPE));
  }
  if (gl_LocalInvocationIndex == 0u) lse[row] = total == 0.0 ? NEG_INF : mx + log(total);
}
