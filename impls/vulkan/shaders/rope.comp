#version 450
// rope (reference/attention/rope.cpp, rope_common.h): one workgroup per token. Its first
// invocations form the token's coefficients c·cos a_f and c·sin a_f, a_f = fl32(p·θ_f), into
// shared memory once; then the workgroup rotates every element of the token's query and key heads,
// consecutive invocations on consecutive elements: out[x] = in[x]·cos + sign·in[partner]·sin.
//
// sin and cos of a float angle are built here: GLSL's promise their accuracy only on [−π, π]
// (absolute 2^-11), and RoPE's angles reach p·θ_0 = p. The reduction r = a − k·π/2 runs in fp64
// (π/2 as fdlibm's 33-bit head and its tail, so k·head is exact for |k| < 2^20) and Cephes'
// minimax polynomials of sinf and cosf on [−π/4, π/4] finish in fp32: within 1.5 ulp of 1.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;

#include "dtype.glsl"
#include "param_struct.glsl"
#include "reference/attention/rope_common.h"

ATTNBENCH_PARAM_STRUCT(RopeParams, ATTNBENCH_ROPE_FIELDS)

layout(push_constant) uniform Push { RopeParams s; } pc;

layout(binding = 0) readonly buffer Q32 { uint q1[]; };
layout(binding = 0) readonly buffer Q16 { uint16_t q2[]; };
layout(binding = 1) readonly buffer K32 { uint k1[]; };
layout(binding = 1) readonly buffer K16 { uint16_t k2[]; };
layout(binding = 2) readonly buffer Positions { int positions[]; };
layout(binding = 3) readonly buffer InvFreq { float inv_freq[]; };
layout(binding = 4) writeonly buffer QR32 { uint qr1[]; };
layout(binding = 4) writeonly buffer QR16 { uint16_t qr2[]; };
layout(binding = 5) writeonly buffer KR32 { uint kr1[]; };
layout(binding = 5) writeonly buffer KR16 { uint16_t kr2[]; };

const uint NT = gl_WorkGroupSize.x;
shared float cos_c[512], sin_c[512];  // rotary_dim / 2 ≤ 512 (the schema's head_dim bound)

void accurate_sincos(float a, out float s, out float c) {
  const double ad = double(a);
  const double k = roundEven(ad * 0.63661977236758134308LF);  // 2/π
  precise double rd = ad - k * 1.57079632673412561417LF;
  rd = rd - k * 6.07710050650619224932e-11LF;
  precise float r = float(rd);
  precise float z = r * r;
  precise float sp = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
  precise float cp = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
  const uint q = uint(int(k) & 3);
  s = q == 0u ? sp : (q == 1u ? cp : (q == 2u ? -sp : -cp));
  c = q == 0u ? cp : (q == 1u ? -sp : (q == 2u ? -cp : sp));
}

float load_x(bool is_q, uint e) {
  if (DTYPE == DT_F32) return uintBitsToFloat(is_q ? q1[e] : k1[e]);
  const uint bits = uint(is_q ? q2[e] : k2[e]);
  return DTYPE == DT_F16 ? f16_bits_to_f32(bits) : bf16_bits_to_f32(bits);
}

void store_x(bool is_q, uint e, float v) {
  if (DTYPE == DT_F32) {
    if (is_q) qr1[e] = floatBitsToUint(v);
    else kr1[e] = floatBitsToUint(v);
  } else {
    const uint16_t bits = uint16_t(f32_to_storage16(v, DTYPE));
    if (is_q) qr2[e] = bits;
    else kr2[e] = bits;
  }
}

void main() {
  const uint token = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint T = uint(pc.s.tokens), D = uint(pc.s.head_dim), R = uint(pc.s.rotary_dim);
  if (token >= uint(pc.s.batch) * T) return;
  const uint b = token / T, t = token % T, tid = gl_LocalInvocationIndex;
  const float p = float(positions[token]);
  for (uint f = tid; f < R / 2u; f += NT) {
    precise float a = p * inv_freq[f];
    float s, c;
    accurate_sincos(a, s, c);
    cos_c[f] = pc.s.attention_factor * c;
    sin_c[f] = pc.s.attention_factor * s;
  }
  barrier();
  const uint hq = uint(pc.s.q_heads), hk = uint(pc.s.kv_heads);
  for (uint idx = tid; idx < (hq + hk) * D; idx += NT) {
    const uint head = idx / D, x = idx % D;
    const bool is_q = head < hq;
    const uint h = is_q ? head : head - hq, heads = is_q ? hq : hk;
    const uint row = ((b * heads + h) * T + t) * D;
    const float v = load_x(is_q, row + x);
    float rotated = v;
    if (x < R) {
      const uint half_r = R / 2u;
      const uint f = pc.s.interleaved != 0 ? x / 2u : x % half_r;
      const uint partner = pc.s.interleaved != 0 ? (x ^ 1u) : (x < half_r ? x + half_r : x - half_r);
      const float sign = pc.s.interleaved != 0 ? ((x & 1u) != 0u ? 1.0 : -1.0) : (x < half_r ? -1.0 : 1.0);
      rotated = v * cos_c[f] + sign * load_x(is_q, row + partner) * sin_c[f];
    }
    store_x(is_q, row + x, rotated);
  }
}
