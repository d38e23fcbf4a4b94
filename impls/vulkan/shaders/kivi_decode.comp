#version 450
// kivi_decode (reference/kvcomp/kivi_decode.cpp): one decode step of attention over KIVI's 2- or
// 4-bit cache (layout: reference/kvcomp/kivi_common.h), dequantized in registers as the codes are
// read: no dequantized copy exists anywhere.
//
// Work split (flash-decoding, as attention_decode.comp): a workgroup owns one (sequence, KV head),
// RB of that head's GQA query rows (all of them when they fit, so each code is read once for the
// whole group) and one split of the keys; with several splits it writes (m, l, unnormalised O)
// partials that kivi_decode_merge.comp combines. The split is walked a tile of TILE = NT·P keys at
// a time, in three phases:
//   scores  lanes over keys: lane i takes keys t0 = tile + i·P .. t0 + P − 1. Keys are
//           channel-major, so for each channel the lane reads the one 32-bit word holding its P
//           codes (P divides a word's 16 or 8 codes, and a group's G ≥ 16 keys, so one word, one
//           scale and one min serve them), unpacks them with shifts and masks, dequantizes
//           (code·scale + min) and accumulates all RB rows' dots; q sits in shared memory, read
//           uniformly by every lane. Keys in the full-precision window (t ≥ k_quant; k_quant is a
//           multiple of G, so a lane's keys are all quantized or all not) read their k_full row
//           with 16-byte loads.
//   softmax the tile's maximum per row (subgroup, then shared memory), the running maximum and
//           the rescale of every lane's l and O, and p = e^(s − m) into shared memory.
//   values  lanes over channels: VL = D/8 lanes cover a token's row, 8 channels each (one word
//           of 4-bit codes, half a word of 2-bit ones, within one scale group), and the NT/VL
//           lane groups take the tile's tokens in turn, each accumulating RB rows of O for its 8
//           channels. Tokens before v_quant are unpacked and dequantized, later ones read v_full.
// At the end l is summed over the workgroup and the lane groups' O are added in shared memory in
// group order (deterministic), then O/l and LSE = m + log l are written, or the split's partial.
//
// Every load is guarded by the sequence's counts (k_quant, v_quant, len): past them the scales,
// minima and full-precision rows are NaN. Subgroup operations are whole-subgroup reductions only,
// so any subgroup size works (lavapipe's 8, or 4 in CI; NVIDIA's 32). The host bounds each split's
// loop iterations for drivers that cap them (llvmpipe's 65535: kivi_decode_vulkan.cpp).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 2u;  // dtype.glsl: 1 f16, 2 bf16
layout(constant_id = 2) const uint D = 128u;    // head_dim, a multiple of 16 (group_size divides it)
layout(constant_id = 3) const uint RB = 4u;     // query rows per workgroup
layout(constant_id = 4) const uint P = 8u;      // keys per lane in the score phase: 4 or 8
layout(constant_id = 5) const uint BITS = 2u;   // 2 or 4
// k_full and v_full rows are D 16-bit elements, D a multiple of 16: every row is whole 16-byte words.
const bool VEC = true;

#include "param_struct.glsl"
#include "load8.glsl"
#include "reference/kvcomp/kivi_common.h"
#include "kvcomp/kivi_decode_plan.h"

ATTNBENCH_PARAM_STRUCT(KiviParams, ATTNBENCH_KIVI_FIELDS)
ATTNBENCH_PARAM_STRUCT(KiviDecodePlan, ATTNBENCH_VK_KIVI_DECODE_PLAN)

layout(push_constant) uniform Push {
  KiviParams s;
  KiviDecodePlan plan;
} pc;

const uint NT = gl_WorkGroupSize.x;
const uint PER_WORD = 32u / BITS;
const uint MASK = (1u << BITS) - 1u;
const uint PV = P / 4u;     // vec4s of a lane's scores per row
const uint TILE = NT * P;   // keys per tile
const uint D4 = D / 4u;
const uint VL = D / 8u;     // lanes per token in the value phase (the host keeps NT ≥ VL)
const uint NGV = NT / VL;   // lane groups in the value phase

layout(binding = 0) readonly buffer Q { uint16_t q2[]; };          // [batch, q_heads, 1, D]
layout(binding = 1) readonly buffer KCodes { uint k_codes[]; };    // [batch, kv_heads, D, k_quant_cap / PER_WORD]
layout(binding = 2) readonly buffer KScale { uint16_t k_scale[]; };  // [batch, kv_heads, D, k_quant_cap / G]
layout(binding = 3) readonly buffer KMin { uint16_t k_min[]; };      // same
DECLARE_INPUT(4, kf4, kf2, kf1)                                      // k_full [batch, kv_heads, R, D]
layout(binding = 5) readonly buffer VCodes { uint v_codes[]; };    // [batch, kv_heads, v_quant_cap, D / PER_WORD]
layout(binding = 6) readonly buffer VScale { uint16_t v_scale[]; };  // [batch, kv_heads, v_quant_cap, D / G]
layout(binding = 7) readonly buffer VMin { uint16_t v_min[]; };      // same
DECLARE_INPUT(8, vf4, vf2, vf1)                                      // v_full [batch, kv_heads, R + 1, D]
layout(binding = 9) readonly buffer KvLen { int kv_len[]; };       // [batch]
layout(binding = 10) writeonly buffer O16 { uint16_t o2[]; };      // [batch, q_heads, 1, D]
layout(binding = 11) writeonly buffer Lse { float lse[]; };        // [batch, q_heads, 1]
layout(binding = 12) writeonly buffer PartMl { vec2 part_ml[]; };  // [batch·q_heads, splits]
layout(binding = 13) writeonly buffer PartO { vec4 part_o[]; };    // [batch·q_heads, splits, D]

DEFINE_LOAD8(load_k_full, kf4, kf2, kf1)
DEFINE_LOAD8(load_v_full, vf4, vf2, vf1)

shared vec4 sh_q[RB * D4];     // the block's query rows
shared float sh_p[RB * TILE];  // the tile's probabilities, per row
shared float sh_red[RB * NT];  // per-subgroup maxima and sums (at most NT subgroups)
shared vec4 sh_o[RB * D4];     // O summed over the value lane groups

float from16(uint16_t h) { return DTYPE == DT_BF16 ? bf16_bits_to_f32(uint(h)) : f16_bits_to_f32(uint(h)); }

// Codes first .. first + 3 of a word, dequantized.
vec4 dequant4(uint word, uint first, float scale, float mn) {
  const uvec4 shifts = (uvec4(first) + uvec4(0u, 1u, 2u, 3u)) * BITS;
  return vec4((uvec4(word) >> shifts) & MASK) * scale + mn;
}

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;
  // Row blocks innermost: the workgroups reading the same keys run together.
  const uint rb = wg % pc.plan.row_blocks;
  const uint split = (wg / pc.plan.row_blocks) % pc.plan.splits;
  const uint bh = wg / (pc.plan.row_blocks * pc.plan.splits);
  const uint b = bh / uint(pc.s.kv_heads), kvh = bh % uint(pc.s.kv_heads);
  const uint len = uint(clamp(kv_len[b], 0, pc.s.kv_cap));
  const uint t_begin = split * pc.plan.split_len;
  if (pc.plan.splits > 1u && t_begin >= len) return;  // the merge reads only splits that hold keys
  const uint t_end = min(len, t_begin + pc.plan.split_len);

  // The sequence's split between codes and full-precision windows (kivi_common.h).
  const uint R = uint(pc.s.residual), G = uint(pc.s.group_size);
  const uint k_quant = len == 0u ? 0u : len - ((len - 1u) % R + 1u);
  const uint v_quant = len - min(len, R + 1u);
  const uint k_words = uint(pc.s.k_quant_cap) / PER_WORD, k_groups = uint(pc.s.k_quant_cap) / G;
  const uint v_words = D / PER_WORD, v_groups = D / G;

  const uint lane = gl_LocalInvocationIndex;
  const uint rows = uint(pc.s.group), row0 = rb * RB;
  const uint head0 = b * uint(pc.s.q_heads) + kvh * rows + row0;  // output row of the block's first row
  for (uint i = lane; i < RB * D4; i += NT) {
    const uint rr = i / D4, c = (i % D4) * 4u;
    vec4 x = vec4(0.0);
    if (row0 + rr < rows) {
      const uint at = (head0 + rr) * D + c;
      x = vec4(from16(q2[at]), from16(q2[at + 1u]), from16(q2[at + 2u]), from16(q2[at + 3u]));
    }
    sh_q[i] = x;
  }

  // The value phase's place: 8 channels of one token at a time.
  const uint vgrp = lane / VL, vc = (lane % VL) * 8u;
  const uint v_word = vc / PER_WORD, v_first = vc % PER_WORD, v_group = vc / G;

  float m[RB], l[RB];  // l: this lane's share of the sum (its keys' p)
  vec4 acc[RB][2];     // O of this lane's 8 channels
  for (uint rr = 0u; rr < RB; ++rr) {
    m[rr] = NEG_INF;
    l[rr] = 0.0;
    acc[rr][0] = acc[rr][1] = vec4(0.0);
  }
  barrier();

  for (uint tile = t_begin; tile < t_end; tile += TILE) {
    // --- scores of keys t0 .. t0 + P − 1
    const uint t0 = tile + lane * P;
    vec4 s[RB][PV];
    for (uint rr = 0u; rr < RB; ++rr)
      for (uint j = 0u; j < PV; ++j) s[rr][j] = vec4(0.0);
    if (t0 < k_quant) {
      uint at_code = bh * D * k_words + t0 / PER_WORD, at_group = bh * D * k_groups + t0 / G;
      const uint first = t0 % PER_WORD;
      for (uint c4 = 0u; c4 < D4; ++c4) {
        vec4 qv[RB];
        for (uint rr = 0u; rr < RB; ++rr) qv[rr] = sh_q[rr * D4 + c4];
        for (uint e = 0u; e < 4u; ++e) {  // channel 4·c4 + e
          const uint word = k_codes[at_code];
          const float scale = from16(k_scale[at_group]), mn = from16(k_min[at_group]);
          at_code += k_words;
          at_group += k_groups;
          for (uint j = 0u; j < PV; ++j) {
            const vec4 k = dequant4(word, first + 4u * j, scale, mn);
            for (uint rr = 0u; rr < RB; ++rr) s[rr][j] += qv[rr][e] * k;
          }
        }
      }
    } else if (t0 < t_end) {
      for (uint i = 0u; i < P; ++i) {
        if (t0 + i >= t_end) break;
        const uint row = (bh * R + (t0 + i - k_quant)) * D;
        float dot_q[RB];
        for (uint rr = 0u; rr < RB; ++rr) dot_q[rr] = 0.0;
        for (uint c8 = 0u; c8 < D / 8u; ++c8) {
          vec4 lo, hi;
          load_k_full(row + c8 * 8u, 8u, lo, hi);
          for (uint rr = 0u; rr < RB; ++rr)
            dot_q[rr] += dot(sh_q[rr * D4 + 2u * c8], lo) + dot(sh_q[rr * D4 + 2u * c8 + 1u], hi);
        }
        for (uint rr = 0u; rr < RB; ++rr) s[rr][i / 4u][i % 4u] = dot_q[rr];
      }
    }

    // --- softmax: the tile's maximum per row over the workgroup, then p into shared memory
    for (uint rr = 0u; rr < RB; ++rr) {
      float mx = NEG_INF;
      for (uint j = 0u; j < PV; ++j)
        for (uint e = 0u; e < 4u; ++e) {
          const float logit = t0 + 4u * j + e < t_end ? s[rr][j][e] * pc.s.scale : NEG_INF;
          s[rr][j][e] = logit;
          mx = max(mx, logit);
        }
      mx = subgroupMax(mx);
      if (subgroupElect()) sh_red[rr * NT + gl_SubgroupID] = mx;
    }
    barrier();
    for (uint rr = 0u; rr < RB; ++rr) {
      float mt = NEG_INF;
      for (uint g = 0u; g < gl_NumSubgroups; ++g) mt = max(mt, sh_red[rr * NT + g]);
      // The tile holds a key (tile < t_end), so mt and the new maximum are finite.
      const float m_new = max(m[rr], mt);
      const float alpha = m[rr] == NEG_INF ? 0.0 : exp2((m[rr] - m_new) * LOG2E);
      m[rr] = m_new;
      l[rr] *= alpha;
      acc[rr][0] *= alpha;
      acc[rr][1] *= alpha;
      for (uint j = 0u; j < PV; ++j)
        for (uint e = 0u; e < 4u; ++e) {
          const float p = s[rr][j][e] == NEG_INF ? 0.0 : exp2((s[rr][j][e] - m_new) * LOG2E);
          l[rr] += p;
          sh_p[rr * TILE + lane * P + 4u * j + e] = p;
        }
    }
    barrier();

    // --- values: this lane group's tokens of the tile, 8 channels each lane
    if (vgrp < NGV)
      for (uint j = vgrp; j < TILE; j += NGV) {
        const uint t = tile + j;
        if (t >= t_end) break;
        vec4 lo, hi;
        if (t < v_quant) {
          const uint word = v_codes[(bh * uint(pc.s.v_quant_cap) + t) * v_words + v_word];
          const uint at_group = (bh * uint(pc.s.v_quant_cap) + t) * v_groups + v_group;
          const float scale = from16(v_scale[at_group]), mn = from16(v_min[at_group]);
          lo = dequant4(word, v_first, scale, mn);
          hi = dequant4(word, v_first + 4u, scale, mn);
        } else {
          load_v_full((bh * (R + 1u) + (t - v_quant)) * D + vc, 8u, lo, hi);
        }
        for (uint rr = 0u; rr < RB; ++rr) {
          const float p = sh_p[rr * TILE + j];
          acc[rr][0] += p * lo;
          acc[rr][1] += p * hi;
        }
      }
    // The next tile writes sh_red, then sh_p only after its own first barrier: no barrier here.
  }

  // l over the workgroup; O over the value lane groups, added in group order.
  float total[RB];
  for (uint rr = 0u; rr < RB; ++rr) {
    const float sum = subgroupAdd(l[rr]);
    if (subgroupElect()) sh_red[rr * NT + gl_SubgroupID] = sum;
  }
  barrier();
  for (uint rr = 0u; rr < RB; ++rr) {
    total[rr] = 0.0;
    for (uint g = 0u; g < gl_NumSubgroups; ++g) total[rr] += sh_red[rr * NT + g];
  }
  for (uint g = 0u; g < NGV; ++g) {
    if (vgrp == g)
      for (uint rr = 0u; rr < RB; ++rr) {
        const uint at = rr * D4 + vc / 4u;
        sh_o[at] = g == 0u ? acc[rr][0] : sh_o[at] + acc[rr][0];
        sh_o[at + 1u] = g == 0u ? acc[rr][1] : sh_o[at + 1u] + acc[rr][1];
      }
    barrier();
  }

  for (uint i = lane; i < RB * D4; i += NT) {
    const uint rr = i / D4, c4 = i % D4;
    if (row0 + rr >= rows) continue;
    const uint orow = head0 + rr;
    const vec4 o = sh_o[i];
    if (pc.plan.splits > 1u) {
      part_o[(orow * pc.plan.splits + split) * D4 + c4] = o;
      if (c4 == 0u) part_ml[orow * pc.plan.splits + split] = vec2(m[rr], total[rr]);
      continue;
    }
    const vec4 out_o = total[rr] == 0.0 ? vec4(0.0) : o / total[rr];
    for (uint e = 0u; e < 4u; ++e) o2[orow * D + c4 * 4u + e] = uint16_t(f32_to_storage16(out_o[e], DTYPE));
    if (c4 == 0u) lse[orow] = total[rr] == 0.0 ? NEG_INF : m[rr] + log(total[rr]);
  }
}
