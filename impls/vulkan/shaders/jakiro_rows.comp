#version 450
// jakiro's row passes (reference/decoding/jakiro.cpp; the projections between them are
// projection.comp), chosen by MODE, one workgroup per forward row r = b·F + q, its lanes taking
// 8-element chunks of the row (16-byte loads when VEC); fp32 arithmetic, one rounding per store:
//   MODE 0  norm        normed = x·inv·g, inv = 1/sqrt(Σx²/d + ε): the lanes' sums of squares
//                       added by a fixed tree in shared memory (the order does not depend on the
//                       subgroup size; no subgroup operation is used)
//   MODE 1  activation  act[r, e] = silu(gate)·up = gate/(1 + exp(−gate))·up for both experts
//   MODE 2  mix         features[b, q] = x + (w₀E₀ + w₁E₁) and, for the last k rows,
//                       features[b, q + k] = x + (w'_hi·E_hi − w'_lo·E_lo), w and w' the
//                       softmaxes of (r₀, r₁) and (r₂, r₃), hi = 0 if r₂ > r₃ else 1
// The exps are accurate_exp: GLSL's exp may be 3 + 2|x| ulp off, the CPU's and the baseline's
// are not.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;                 // a power of two (the norm's tree)
layout(constant_id = 1) const uint MODE = 0u;
layout(constant_id = 2) const uint DTYPE = 0u;
layout(constant_id = 3) const bool VEC = false;  // d·sizeof(dtype) is a multiple of 16: every row aligns

#include "accurate_math.glsl"
#include "load8.glsl"
#include "param_struct.glsl"
#include "reference/decoding/jakiro_common.h"

ATTNBENCH_PARAM_STRUCT(JakiroParams, ATTNBENCH_JAKIRO_FIELDS)

layout(push_constant) uniform Push {
  JakiroParams p;
} pc;

const uint NT = gl_WorkGroupSize.x;

// A storage-dtype tensor the passes write, under two views, and its rounding store.
#define DECLARE_OUTPUT(BINDING, V2, V1)                                          \
  layout(binding = BINDING) writeonly buffer V2##_block { uint16_t V2[]; };      \
  layout(binding = BINDING) writeonly buffer V1##_block { uint V1[]; };          \
  void V1##_store(uint e, float v) {                                             \
    if (DTYPE == DT_F32) V1[e] = floatBitsToUint(v);                             \
    else V2[e] = uint16_t(f32_to_storage16(v, DTYPE));                           \
  }

DECLARE_INPUT(0, x4, x2, x1)                        // hidden_states [B·F, d]
DECLARE_INPUT(1, g4, g2, g1)                        // norm_weight [d]
DECLARE_OUTPUT(2, normed2, normed1)                 // [B·F, d]
DECLARE_INPUT(3, gu4, gu2, gu1)                     // gate_up [B·F, 4d]: expert e's gate at 2e·d, up at (2e + 1)·d
DECLARE_OUTPUT(4, act2, act1)                       // [B·F, 2, d]
DECLARE_INPUT(5, ex4, ex2, ex1)                     // expert_out [B·F, 2, d]
layout(binding = 6) readonly buffer Router { float router[]; };  // [B·F, 4] f32
DECLARE_OUTPUT(7, feat2, feat1)                     // features [B, S, d]

DEFINE_LOAD8(load_x, x4, x2, x1)
DEFINE_LOAD8(load_g, g4, g2, g1)
DEFINE_LOAD8(load_gu, gu4, gu2, gu1)
DEFINE_LOAD8(load_ex, ex4, ex2, ex1)

shared float sh_tree[NT];

float workgroup_sum(float v) {
  const uint tid = gl_LocalInvocationIndex;
  sh_tree[tid] = v;
  barrier();
  for (uint w = NT / 2u; w > 0u; w >>= 1u) {
    if (tid < w) sh_tree[tid] += sh_tree[tid + w];
    barrier();
  }
  return sh_tree[0];
}

float at(vec4 lo, vec4 hi, uint j) { return j < 4u ? lo[j] : hi[j - 4u]; }

void norm_pass(uint r, uint d) {
  float ss = 0.0;
  for (uint c = 8u * gl_LocalInvocationIndex; c < d; c += 8u * NT) {
    vec4 lo, hi;
    load_x(r * d + c, d - c, lo, hi);  // zero past the row's end
    ss += dot(lo, lo) + dot(hi, hi);
  }
  precise const float inv = 1.0 / sqrt(workgroup_sum(ss) / float(d) + pc.p.eps);
  for (uint c = 8u * gl_LocalInvocationIndex; c < d; c += 8u * NT) {
    vec4 xl, xh, wl, wh;
    load_x(r * d + c, d - c, xl, xh);
    load_g(c, d - c, wl, wh);
    for (uint j = 0u; j < 8u && c + j < d; ++j) normed1_store(r * d + c + j, at(xl, xh, j) * inv * at(wl, wh, j));
  }
}

void activation_pass(uint r, uint d) {
  for (uint e = 0u; e < 2u; ++e)
    for (uint c = 8u * gl_LocalInvocationIndex; c < d; c += 8u * NT) {
      vec4 tl, th, ul, uh;
      load_gu(r * 4u * d + 2u * e * d + c, d - c, tl, th);
      load_gu(r * 4u * d + (2u * e + 1u) * d + c, d - c, ul, uh);
      for (uint j = 0u; j < 8u && c + j < d; ++j) {
        const float gate = at(tl, th, j);
        precise const float a = gate / (1.0 + accurate_exp(-gate)) * at(ul, uh, j);
        act1_store((r * 2u + e) * d + c + j, a);
      }
    }
}

// softmax(a, c) as the CPU impl forms it.
vec2 softmax2(float a, float c) {
  const float m = max(a, c), ea = accurate_exp(a - m), ec = accurate_exp(c - m);
  return vec2(ea / (ea + ec), ec / (ea + ec));
}

void mix_pass(uint r, uint d) {
  const uint F = uint(pc.p.forward_rows), S = uint(pc.p.slots), b = r / F, q = r % F;
  const int s_con = pc.p.contrastive != 0 && q + uint(pc.p.top_k) >= F ? int(q) + pc.p.top_k : -1;  // jakiro_contrastive_slot
  const vec4 z = vec4(router[r * 4u], router[r * 4u + 1u], router[r * 4u + 2u], router[r * 4u + 3u]);
  const vec2 w = softmax2(z.x, z.y), wc = softmax2(z.z, z.w);
  const bool hi0 = z.z > z.w;  // a tie: expert 1 is hi
  const float w_hi = hi0 ? wc.x : wc.y, w_lo = hi0 ? wc.y : wc.x;
  for (uint c = 8u * gl_LocalInvocationIndex; c < d; c += 8u * NT) {
    vec4 xl, xh, al, ah, bl, bh;
    load_x(r * d + c, d - c, xl, xh);
    load_ex(r * 2u * d + c, d - c, al, ah);
    load_ex(r * 2u * d + d + c, d - c, bl, bh);
    for (uint j = 0u; j < 8u && c + j < d; ++j) {
      const float x = at(xl, xh, j), e0 = at(al, ah, j), e1 = at(bl, bh, j);
      precise const float moe = x + (w.x * e0 + w.y * e1);
      feat1_store((b * S + q) * d + c + j, moe);
      if (s_con >= 0) {
        precise const float con = x + (w_hi * (hi0 ? e0 : e1) - w_lo * (hi0 ? e1 : e0));
        feat1_store((b * S + uint(s_con)) * d + c + j, con);
      }
    }
  }
}

void main() {
  const uint r = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (r >= uint(pc.p.batch) * uint(pc.p.forward_rows)) return;  // whole workgroups
  const uint d = uint(pc.p.hidden);
  if (MODE == 0u) norm_pass(r, d);
  else if (MODE == 1u) activation_pass(r, d);
  else mix_pass(r, d);
}
