#version 450
// kivi (reference/kvcomp/kivi.cpp): KIVI's quantizer, a full-precision K and V cache into the
// packed cache of reference/kvcomp/kivi_common.h, padding included, bit for bit as the reference's
// quantize_group (kivi_quant.h).
//
// One invocation per item, the items in three ranges (kivi_quant_plan.h):
//   keys     one channel's group of G tokens: (sequence·KV head, group, channel), channels
//            innermost, so a subgroup reads consecutive channels of each token row. It writes the
//            group's G / per_word code words, its scale and its min; past the sequence's quantized
//            keys it writes the padding (codes 0, scale and min NaN).
//   values   one token's group of G channels: (sequence·KV head, token, group); its words, scale and
//            min, or the padding past the quantized tokens.
//   windows  one row of k_full or v_full (the token's, or NaN past the window's rows), and with
//            k_full's row 0 the split's lengths.
// A group is quantize_group's steps in its order: min and max over the values in order (the
// running value kept on ties), fl32(mx − mn) / (2^b − 1), the scale rounded to the dtype (to
// nearest even, integer arithmetic: dtype.glsl) and widened exactly, the flat guard, then per value
// fl32(x − mn) / scale, the clamp and the rounding (roundEven; or half away: the integer part plus
// one from a fraction of a half up). Everything is `precise` (no contraction, no reassociation).
// Vulkan lets a division be 2.5 ulp off, so each quotient is corrected to the correctly rounded
// one: the exact remainders a − q·b of q and its neighbours (Dekker's exact product, no fma
// needed) say which float is nearest a/b (a quotient is never a midpoint). f16 values widen in
// integer arithmetic, subnormals exact (unpackHalf2x16 may flush them).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 2u;  // dtype.glsl: 1 f16, 2 bf16
layout(constant_id = 2) const uint BITS = 2u;   // 2 or 4

#include "param_struct.glsl"
#include "dtype.glsl"
#include "reference/kvcomp/kivi_common.h"
#include "kvcomp/kivi_quant_plan.h"

ATTNBENCH_PARAM_STRUCT(KiviParams, ATTNBENCH_KIVI_FIELDS)
ATTNBENCH_PARAM_STRUCT(KiviQuantPlan, ATTNBENCH_VK_KIVI_QUANT_PLAN)

layout(push_constant) uniform Push {
  KiviParams s;
  KiviQuantPlan plan;
} pc;

const uint NT = gl_WorkGroupSize.x;
const uint PER_WORD = 32u / BITS;
const uint TOP_CODE = (1u << BITS) - 1u;
const uint NAN16 = DTYPE == DT_BF16 ? 0x7fc0u : 0x7e00u;  // the reference's NaN (dtype.cpp)
const uint ONE16 = DTYPE == DT_BF16 ? 0x3f80u : 0x3c00u;  // 1.0

layout(binding = 0) readonly buffer K { uint16_t k[]; };              // [batch, kv_heads, kv_cap, D]
layout(binding = 1) readonly buffer Vin { uint16_t v[]; };            // same
layout(binding = 2) readonly buffer KvLen { int kv_len[]; };          // [batch]
layout(binding = 3) writeonly buffer KCodes { uint k_codes[]; };      // [batch, kv_heads, D, k_quant_cap / PER_WORD]
layout(binding = 4) writeonly buffer KScale { uint16_t k_scale[]; };  // [batch, kv_heads, D, k_quant_cap / G]
layout(binding = 5) writeonly buffer KMin { uint16_t k_min[]; };      // same
layout(binding = 6) writeonly buffer KFull { uint16_t k_full[]; };    // [batch, kv_heads, R, D]
layout(binding = 7) writeonly buffer VCodes { uint v_codes[]; };      // [batch, kv_heads, v_quant_cap, D / PER_WORD]
layout(binding = 8) writeonly buffer VScale { uint16_t v_scale[]; };  // [batch, kv_heads, v_quant_cap, D / G]
layout(binding = 9) writeonly buffer VMin { uint16_t v_min[]; };      // same
layout(binding = 10) writeonly buffer VFull { uint16_t v_full[]; };   // [batch, kv_heads, R + 1, D]
layout(binding = 11) writeonly buffer KQuantGroups { int k_quant_groups[]; };  // [batch, kv_heads, D]
layout(binding = 12) writeonly buffer KFullLen { int k_full_len[]; };          // [batch, kv_heads]
layout(binding = 13) writeonly buffer VQuantLen { int v_quant_len[]; };        // [batch, kv_heads]
layout(binding = 14) writeonly buffer VFullLen { int v_full_len[]; };          // [batch, kv_heads]

// A stored 16-bit value as fp32, exactly (f16 subnormals included).
float widen(uint h) {
  if (DTYPE == DT_BF16) return uintBitsToFloat(h << 16);
  const uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0u) {
    precise float sub = float(m) * uintBitsToFloat(0x33800000u);  // m·2^-24: exact
    return uintBitsToFloat(floatBitsToUint(sub) | sign);
  }
  if (e == 31u) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
  return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

float load(bool keys, uint at) { return widen(uint(keys ? k[at] : v[at])); }

// Veltkamp's split of x into halves of 12 significant bits: x = hi + lo exactly.
void split(float x, out float hi, out float lo) {
  precise float c = 4097.0 * x;
  precise float h = c - (c - x);
  precise float l = x - h;
  hi = h;
  lo = l;
}

// a − q·b, exact when q is within an ulp of a/b (Dekker: p + e = q·b exactly; a − p exact by
// Sterbenz; the remainder of a faithful quotient is a float).
float remainder_of(float a, float b, float q) {
  float qh, ql, bh, bl;
  split(q, qh, ql);
  split(b, bh, bl);
  precise float p = q * b;
  precise float e = ((qh * bh - p) + qh * bl + ql * bh) + ql * bl;
  precise float r = (a - p) - e;
  return r;
}

// a / b correctly rounded (a ≥ 0, b > 0, finite and normal): the device's quotient, then the
// neighbour whose remainder is smaller while there is one.
float div_rn(float a, float b) {
  precise float q = a / b;
  if (a == 0.0) return 0.0;
  float r = remainder_of(a, b, q);
  for (uint step = 0u; step < 3u && r != 0.0; ++step) {
    const uint u = floatBitsToUint(q);
    const float next = uintBitsToFloat(r > 0.0 ? u + 1u : u - 1u);  // q > 0: toward a/b
    const float rn = remainder_of(a, b, next);
    if (abs(rn) >= abs(r)) break;
    q = next;
    r = rn;
  }
  return q;
}

// One group of G values at base, base + stride, …: its words from code_word, its scale and min at
// group_at (of the keys' tensors or the values').
void quantize(bool keys, uint base, uint stride, uint code_word, uint group_at) {
  const uint G = uint(pc.s.group_size);
  const float top = float(TOP_CODE);
  precise float mn = load(keys, base);
  precise float mx = mn;
  for (uint i = 1u; i < G; ++i) {
    const float x = load(keys, base + i * stride);
    mn = x < mn ? x : mn;  // std::min(mn, x)
    mx = mx < x ? x : mx;  // std::max(mx, x)
  }
  precise float range = mx - mn;
  const uint scale_bits = f32_to_storage16(div_rn(range, top), DTYPE);
  const float rounded = widen(scale_bits);
  const bool is_flat = mx == mn || rounded == 0.0;
  const float scale = is_flat ? 1.0 : rounded;
  const uint min_bits = f32_to_storage16(mn, DTYPE);  // exact: the min is one of the values
  if (keys) {
    k_scale[group_at] = uint16_t(is_flat ? ONE16 : scale_bits);
    k_min[group_at] = uint16_t(min_bits);
  } else {
    v_scale[group_at] = uint16_t(is_flat ? ONE16 : scale_bits);
    v_min[group_at] = uint16_t(min_bits);
  }
  uint word = 0u;
  for (uint i = 0u; i < G; ++i) {
    precise float d = load(keys, base + i * stride) - mn;
    precise float c = min(max(div_rn(d, scale), 0.0), top);
    uint code = 0u;
    if (!is_flat) {
      if (pc.s.half_away != 0) {
        precise float whole = floor(c);
        precise float frac = c - whole;
        code = uint(whole) + (frac >= 0.5 ? 1u : 0u);
      } else {
        code = uint(roundEven(c));
      }
    }
    word |= code << ((i % PER_WORD) * BITS);
    if (i % PER_WORD == PER_WORD - 1u) {
      if (keys) k_codes[code_word + i / PER_WORD] = word;
      else v_codes[code_word + i / PER_WORD] = word;
      word = 0u;
    }
  }
}

void main() {
  const uint item = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * NT + gl_LocalInvocationIndex;
  if (item >= pc.plan.items) return;
  const uint H = uint(pc.s.kv_heads), D = uint(pc.s.head_dim), G = uint(pc.s.group_size), T = uint(pc.s.kv_cap);
  const uint R = uint(pc.s.residual), F = PER_WORD;
  const uint k_groups = uint(pc.s.k_quant_cap) / G, k_words = uint(pc.s.k_quant_cap) / F;
  const uint v_cap = uint(pc.s.v_quant_cap), v_groups = D / G, v_words = D / F;

  if (item < pc.plan.key_items) {
    const uint c = item % D, g = (item / D) % k_groups, bh = item / (D * k_groups);
    const uint len = uint(clamp(kv_len[bh / H], 0, pc.s.kv_cap));
    const uint k_quant = len == 0u ? 0u : len - ((len - 1u) % R + 1u);
    const uint word0 = (bh * D + c) * k_words + g * (G / F), group_at = (bh * D + c) * k_groups + g;
    if (g * G >= k_quant) {  // past the quantized keys: the layout's padding
      for (uint w = 0u; w < G / F; ++w) k_codes[word0 + w] = 0u;
      k_scale[group_at] = uint16_t(NAN16);
      k_min[group_at] = uint16_t(NAN16);
      return;
    }
    quantize(true, (bh * T + g * G) * D + c, D, word0, group_at);
  } else if (item < pc.plan.key_items + pc.plan.value_items) {
    const uint i = item - pc.plan.key_items;
    const uint gv = i % v_groups, t = (i / v_groups) % v_cap, bh = i / (v_groups * v_cap);
    const uint len = uint(clamp(kv_len[bh / H], 0, pc.s.kv_cap));
    const uint v_quant = len - min(len, R + 1u);
    const uint word0 = (bh * v_cap + t) * v_words + gv * (G / F), group_at = (bh * v_cap + t) * v_groups + gv;
    if (t >= v_quant) {  // past the quantized tokens: the layout's padding
      for (uint w = 0u; w < G / F; ++w) v_codes[word0 + w] = 0u;
      v_scale[group_at] = uint16_t(NAN16);
      v_min[group_at] = uint16_t(NAN16);
      return;
    }
    quantize(false, (bh * T + t) * D + gv * G, 1u, word0, group_at);
  } else {
    const uint i = item - pc.plan.key_items - pc.plan.value_items, row = i % (2u * R + 1u), bh = i / (2u * R + 1u);
    const uint len = uint(clamp(kv_len[bh / H], 0, pc.s.kv_cap));
    const uint k_full_n = len == 0u ? 0u : (len - 1u) % R + 1u, k_quant = len - k_full_n;
    const uint v_full_n = min(len, R + 1u), v_quant = len - v_full_n;
    if (row < R) {
      const uint dst = (bh * R + row) * D, src = (bh * T + k_quant + row) * D;
      if (row < k_full_n)
        for (uint x = 0u; x < D; ++x) k_full[dst + x] = k[src + x];
      else
        for (uint x = 0u; x < D; ++x) k_full[dst + x] = uint16_t(NAN16);
    } else {
      const uint r = row - R, dst = (bh * (R + 1u) + r) * D, src = (bh * T + v_quant + r) * D;
      if (r < v_full_n)
        for (uint x = 0u; x < D; ++x) v_full[dst + x] = v[src + x];
      else
        for (uint x = 0u; x < D; ++x) v_full[dst + x] = uint16_t(NAN16);
    }
    if (row == 0u) {
      for (uint x = 0u; x < D; ++x) k_quant_groups[bh * D + x] = int(k_quant / G);
      k_full_len[bh] = int(k_full_n);
      v_quant_len[bh] = int(v_quant);
      v_full_len[bh] = int(v_full_n);
    }
  }
}
