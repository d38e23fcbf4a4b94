#version 450
// Second pass of split-KV attention: combines each row's split partials (m_s, l_s, O_s, with
// O_s unnormalised) into O and LSE:
//   M = max_s m_s,  L = Σ_s e^(m_s − M)·l_s,  O = Σ_s e^(m_s − M)·O_s / L,  LSE = M + log L
// A row no split saw a key of gets O = 0 and LSE = −inf. One workgroup per task position of a
// (batch, KV head): with head_sparse the positions past the group's active rows exit, and O takes
// the row's gate. It binds the attention kernels' twelve buffers and takes their push constants.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint D = 128u;   // v_head_dim: the width of O rows
layout(constant_id = 3) const uint DP = 128u;  // partial row stride (a multiple of 4)

#include "attention_common.glsl"

layout(binding = 4) writeonly buffer O32 { uint o1[]; };
layout(binding = 4) writeonly buffer O16 { uint16_t o2[]; };
layout(binding = 5) writeonly buffer Lse { float lse[]; };
layout(binding = 6) readonly buffer PartMl { vec2 part_ml[]; };
layout(binding = 7) readonly buffer PartO { float part_o[]; };

void main() {
  const uint wg = workgroup_index();
  const uint bh = wg / pc.plan.rows, p = wg % pc.plan.rows;
  if (bh >= uint(pc.s.batch) * uint(pc.s.kv_heads) || p >= task_rows(bh)) return;
  const uint b = bh / uint(pc.s.kv_heads), kvh = bh % uint(pc.s.kv_heads), r = packed_row(bh, p);
  const uint row = out_row(b, head_of(kvh, r), pos_of(r));
  float mx = NEG_INF;
  for (uint s = 0u; s < pc.plan.splits; ++s) mx = max(mx, part_ml[row * pc.plan.splits + s].x);
  float total = 0.0;
  for (uint s = 0u; s < pc.plan.splits; ++s) {
    const vec2 ml = part_ml[row * pc.plan.splits + s];
    if (ml.y != 0.0) total += ml.y * exp2((ml.x - mx) * LOG2E);
  }
  const float gate = row_gate(row);
  for (uint x = gl_LocalInvocationIndex; x < D; x += gl_WorkGroupSize.x) {
    float o = 0.0;
    for (uint s = 0u; s < pc.plan.splits; ++s) {
      const vec2 ml = part_ml[row * pc.plan.splits + s];
      if (ml.y != 0.0) o += exp2((ml.x - mx) * LOG2E) * part_o[(row * pc.plan.splits + s) * DP + x];
    }
    o = total == 0.0 ? 0.0 : o / total * gate;
    if (DTYPE == DT_F32) o1[row * D + x] = floatBitsToUint(o);
    else o2[row * D + x] = uint16_t(f32_to_storage16(o, DTYPE));
  }
  if (gl_LocalInvocationIndex == 0u) lse[row] = total == 0.0 ? NEG_INF : mx + log(total);
}
