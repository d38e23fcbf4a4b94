#version 450
// The selection cache's decision (kvcomp/kv_stages.h; semantics: reference/kvcomp/
// selection_cache.h), one score row per workgroup: the cosine of the row's decode queries q and
// the cached query q_cached, each flattened over the row's heads (heads_per_score_row ·
// head_dim values, contiguous in [batch, q_heads, 1, head_dim]), and cache_hit = cos >= threshold.
//   cos = dot / sqrt(na · nb)  (0 where a norm is 0), dot = q·q_c, na = ‖q‖², nb = ‖q_c‖²
// All fp32, as the CPU's kv::cache_cosine: lane l sums its values l, l + NT, … in order, then a
// shared-memory tree adds the lanes' sums in a fixed order (no subgroup arithmetic, whose order a
// driver chooses), so a rerun gives the same bits; every step is `precise` (no contraction a
// driver might apply differently). The tree's error is far inside the check's band (n + 8 ulp).
// f16 and bf16 widen exactly in integers (f16 subnormals too).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;  // dtype.glsl's code of q and q_cached

const uint NT = gl_WorkGroupSize.x;

#include "param_struct.glsl"
#include "dtype.glsl"
#include "reference/kvcomp/scored_selection_common.h"
#include "kvcomp/kv_stages.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(CachePlan, ATTNBENCH_KV_CACHE_PLAN)

layout(binding = 0) readonly buffer Q32 { float q32[]; };  // [batch, q_heads, 1, head_dim]
layout(binding = 0) readonly buffer Q16 { uint16_t q16[]; };
layout(binding = 1) readonly buffer QC32 { float qc32[]; };  // q_cached, the same layout
layout(binding = 1) readonly buffer QC16 { uint16_t qc16[]; };
layout(binding = 2) writeonly buffer Hit { int cache_hit[]; };  // [score rows]

layout(push_constant) uniform Push {
  SelectionParams sel;
  CachePlan plan;
} pc;

shared float sh_dot[NT];
shared float sh_na[NT];
shared float sh_nb[NT];

// An f16's value, exactly (a subnormal's too, which unpackHalf2x16 may flush).
float f16_exact(uint h) {
  const uint e = (h >> 10u) & 31u, m = h & 0x3ffu, sign = (h & 0x8000u) << 16u;
  if (e == 0u) return uintBitsToFloat(sign | floatBitsToUint(float(m) * 5.9604644775390625e-8));  // m·2^-24
  if (e == 31u) return uintBitsToFloat(sign | 0x7f800000u | (m << 13u));
  return uintBitsToFloat(sign | ((e + 112u) << 23u) | (m << 13u));
}

float load_q(uint i) {
  if (DTYPE == DT_F32) return q32[i];
  const uint h = uint(q16[i]);
  return DTYPE == DT_BF16 ? bf16_bits_to_f32(h) : f16_exact(h);
}

float load_qc(uint i) {
  if (DTYPE == DT_F32) return qc32[i];
  const uint h = uint(qc16[i]);
  return DTYPE == DT_BF16 ? bf16_bits_to_f32(h) : f16_exact(h);
}

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint rows = pc.sel.shared_scores != 0 ? uint(pc.sel.batch) : uint(pc.sel.batch * pc.sel.kv_heads);
  if (row >= rows) return;
  const uint lane = gl_LocalInvocationID.x;
  const uint n = uint(pc.sel.shared_scores != 0 ? pc.sel.q_heads : pc.sel.group) * uint(pc.sel.head_dim);
  const uint base = row * n;
  precise float dot = 0.0, na = 0.0, nb = 0.0;
  for (uint i = lane; i < n; i += NT) {
    const float a = load_q(base + i), b = load_qc(base + i);
    precise const float ab = a * b, aa = a * a, bb = b * b;
    dot = dot + ab;
    na = na + aa;
    nb = nb + bb;
  }
  sh_dot[lane] = dot;
  sh_na[lane] = na;
  sh_nb[lane] = nb;
  barrier();
  // Lane l adds lane l + h for h = P/2, P/4, …, 1 (P: NT rounded up to a power of two).
  uint half_width = 1u;
  while (half_width * 2u < NT) half_width *= 2u;
  for (uint h = half_width; h > 0u; h >>= 1u) {
    if (lane < h && lane + h < NT) {
      precise const float d2 = sh_dot[lane] + sh_dot[lane + h];
      precise const float a2 = sh_na[lane] + sh_na[lane + h];
      precise const float b2 = sh_nb[lane] + sh_nb[lane + h];
      sh_dot[lane] = d2;
      sh_na[lane] = a2;
      sh_nb[lane] = b2;
    }
    barrier();
  }
  if (lane == 0u) {
    const float d = sh_dot[0], a = sh_na[0], b = sh_nb[0];
    precise const float norms = a * b;
    precise const float cosine = a > 0.0 && b > 0.0 ? d / sqrt(norms) : 0.0;
    cache_hit[row] = cosine >= pc.plan.threshold ? 1 : 0;
  }
}
