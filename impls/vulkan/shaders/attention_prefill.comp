#version 450
// Tiled attention for many query rows per KV head (prefill), portable: no cooperative matrices,
// only shared memory and subgroup shuffles. A workgroup owns BR packed rows of one (batch, KV
// head) and one split of the keys. Q stays in shared memory; K and V tiles of BC keys are
// loaded with 16-byte loads (once per tile for all BR rows: GQA packing), and each thread
// computes a TM x TN block of S = Q·Kᵀ from registers. A row's team of CT lanes (one subgroup
// shares it) reduces the row's maximum and sum with shuffles, rescales its accumulators (online
// softmax), writes P to shared memory, and accumulates O += P·V over a TM x DP/CT block.
// Tiles beyond the block's last visible key (causal, ragged) are skipped; keys past the end are
// zero-filled in shared memory, so padding (NaN) is never read. V and O rows are DV wide (V's
// v_stride apart), which may differ from K's D (MLA). With head_sparse a block's rows are
// positions of its group's row map (attention_common.glsl), ascending packed rows, so its first
// and last rows still bound its keys; a block past the group's active rows exits at once. With
// key_index the tiles hold list positions, each loaded from its listed key's rows (key_row); with
// key_bias a logit adds the bias of that row (decode steps of many rows per KV head come here).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint D = 128u;    // head_dim
layout(constant_id = 3) const uint DP = 128u;   // padded head_dim: a multiple of 8 and of 4·CT
layout(constant_id = 4) const uint BR = 32u;    // packed rows per workgroup
layout(constant_id = 5) const uint BC = 16u;    // keys per tile (a multiple of CT)
layout(constant_id = 6) const uint TM = 4u;     // rows per thread
layout(constant_id = 7) const uint CT = 8u;     // lanes per row team: a power of two dividing the subgroup
layout(constant_id = 8) const bool VEC = true;  // D·sizeof(dtype) is a multiple of 16
layout(constant_id = 9) const uint DV = 128u;   // v_head_dim: the width of V and O rows
layout(constant_id = 10) const uint DPV = 128u; // padded v_head_dim: a multiple of 8 and of 4·CT
layout(constant_id = 11) const bool VEC_V = true;  // v_stride·sizeof(dtype) is a multiple of 16

#include "attention_common.glsl"

const uint NT = gl_WorkGroupSize.x;  // (BR / TM) · CT
const uint TN = BC / CT;             // keys per thread in S
const uint DP4 = DP / 4u;
const uint DPV4 = DPV / 4u;
const uint DPT4 = DPV4 / CT;         // vec4s of O per thread and row
const uint NCH = DP / 8u;
const uint NCHV = DPV / 8u;
const uint NCHM = NCH > NCHV ? NCH : NCHV;
const uint KS = DP4 + 1u;            // K row stride in vec4s: the pad keeps a team's reads on distinct banks
const uint PS = BC + 1u;

DECLARE_INPUT(0, q4, q2, q1)
DECLARE_INPUT(1, k4, k2, k1)
DECLARE_INPUT(2, v4, v2, v1)
layout(binding = 3) readonly buffer KvLen { int kv_len[]; };
layout(binding = 4) writeonly buffer O32 { uint o1[]; };
layout(binding = 4) writeonly buffer O16 { uint16_t o2[]; };
layout(binding = 5) writeonly buffer Lse { float lse[]; };
layout(binding = 6) writeonly buffer PartMl { vec2 part_ml[]; };
layout(binding = 7) writeonly buffer PartO { vec4 part_o[]; };
layout(binding = 8) readonly buffer Slopes { float alibi_slopes[]; };  // [q_heads] with alibi

DEFINE_LOAD8(load_q, q4, q2, q1)
DEFINE_LOAD8(load_k, k4, k2, k1)
DEFINE_LOAD8_ALIGNED(load_v, v4, v2, v1, VEC_V)

shared vec4 Qs[BR * DP4];
shared vec4 Ks[BC * KS];
shared vec4 Vs[BC * DPV4];
shared float Ps[BR * PS];

void main() {
  const uint wg = workgroup_index();
  if (wg >= pc.plan.groups) return;
  // Row blocks outermost and last first: causal blocks late in the sequence, which see the
  // most keys, start first.
  const uint split = wg % pc.plan.splits;
  const uint bh = (wg / pc.plan.splits) % (uint(pc.s.batch) * uint(pc.s.kv_heads));
  const uint rb = pc.plan.row_blocks - 1u - wg / (pc.plan.splits * uint(pc.s.batch) * uint(pc.s.kv_heads));
  const uint b = bh / uint(pc.s.kv_heads), kvh = bh % uint(pc.s.kv_heads);
  const uint rows = task_rows(bh);
  if (rb * BR >= rows) return;  // the whole workgroup: no active row in its block
  const uint kvlen = uint(clamp(kv_len[kv_len_index(b, kvh)], 0, pc.s.kv_cap));
  const uint tid = gl_LocalInvocationIndex;
  const uint vl = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
  const uint rg = vl / CT, ct = vl % CT;

  for (uint idx = tid; idx < BR * NCH; idx += NT) {
    const uint lr = idx / NCH, c = idx % NCH, p = rb * BR + lr;
    vec4 lo = vec4(0.0), hi = vec4(0.0);
    if (p < rows) {
      const uint r = packed_row(bh, p);
      load_q(out_row(b, head_of(kvh, r), pos_of(r)) * D + c * 8u, c * 8u < D ? D - c * 8u : 0u, lo, hi);
    }
    Qs[lr * DP4 + c * 2u] = lo;
    Qs[lr * DP4 + c * 2u + 1u] = hi;
  }

  uint vend[TM], vbeg[TM], vsink[TM];
  float m[TM], l[TM], slope[TM], qpos[TM];
  vec4 acc[TM][DPT4];
  for (uint tm = 0u; tm < TM; ++tm) {
    const uint p = rb * BR + rg * TM + tm;
    const uint r = p < rows ? packed_row(bh, p) : p;
    vend[tm] = p < rows ? visible_end(kvlen, pos_of(r)) : 0u;
    vbeg[tm] = window_begin(vend[tm]);
    vsink[tm] = sink_end(vbeg[tm]);
    slope[tm] = pc.s.alibi != 0 && p < rows ? alibi_slopes[head_of(kvh, r)] : 0.0;
    qpos[tm] = float(int(kvlen) - pc.s.q_len + int(pos_of(r)));
    m[tm] = NEG_INF;
    l[tm] = 0.0;
    for (uint j = 0u; j < DPT4; ++j) acc[tm][j] = vec4(0.0);
  }
  // The block's last row sees the most keys (visible_end grows with the position).
  const uint last = packed_row(bh, min(rows, rb * BR + BR) - 1u);
  const uint k0 = split * pc.plan.split_len;
  const uint k1 = min(k0 + pc.plan.split_len, visible_end(kvlen, pos_of(last)));
  const uint vstride = uint(pc.s.v_stride);
  // Keys no row of the block sees (between the last row's sinks and the first row's window) are
  // skipped: the first row has the earliest window, the last the most sinks.
  const uint begin_min = window_begin(visible_end(kvlen, pos_of(packed_row(bh, rb * BR))));
  const uint sink_max = sink_end(window_begin(visible_end(kvlen, pos_of(last))));

  for (uint t0 = k0; t0 < k1; t0 += BC) {
    if (t0 >= sink_max && t0 < begin_min) t0 = begin_min;
    if (t0 >= k1) break;
    barrier();  // the previous tile's readers are done
    for (uint idx = tid; idx < BC * NCHM; idx += NT) {
      const uint key = idx / NCHM, c = idx % NCHM, n = t0 + key;
      const uint row = n < k1 ? key_row(b, kvh, n) : 0u;
      if (c < NCH) {
        vec4 klo = vec4(0.0), khi = vec4(0.0);
        if (n < k1 && c * 8u < D) load_k(row * D + c * 8u, D - c * 8u, klo, khi);
        Ks[key * KS + c * 2u] = klo;
        Ks[key * KS + c * 2u + 1u] = khi;
      }
      if (c < NCHV) {
        vec4 vlo = vec4(0.0), vhi = vec4(0.0);
        if (n < k1 && c * 8u < DV) load_v(row * vstride + c * 8u, DV - c * 8u, vlo, vhi);
        Vs[key * DPV4 + c * 2u] = vlo;
        Vs[key * DPV4 + c * 2u + 1u] = vhi;
      }
    }
    barrier();

    float s[TM][TN];
    for (uint tm = 0u; tm < TM; ++tm)
      for (uint jn = 0u; jn < TN; ++jn) s[tm][jn] = 0.0;
    for (uint d4 = 0u; d4 < DP4; ++d4) {
      vec4 qv[TM];
      for (uint tm = 0u; tm < TM; ++tm) qv[tm] = Qs[(rg * TM + tm) * DP4 + d4];
      for (uint jn = 0u; jn < TN; ++jn) {
        const vec4 kv = Ks[(ct + jn * CT) * KS + d4];
        for (uint tm = 0u; tm < TM; ++tm) s[tm][jn] += dot(qv[tm], kv);
      }
    }

    for (uint tm = 0u; tm < TM; ++tm) {
      float mt = NEG_INF;
      float sg[TN];  // cog's signs (1 otherwise): the softmax runs over |logit|
      for (uint jn = 0u; jn < TN; ++jn) {
        const uint n = t0 + ct + jn * CT;
        const bool vis = n < k1 && key_visible(n, vsink[tm], vbeg[tm], vend[tm]) &&
                         tree_sees(b, pos_of(packed_row(bh, rb * BR + rg * TM + tm)), kvlen, n);
        const float lg = vis ? with_key_bias(final_logit(s[tm][jn] * pc.s.scale, n, slope[tm], qpos[tm]), b, kvh, n) : 0.0;
        sg[jn] = pc.s.signed_weights != 0 ? sign(lg) : 1.0;
        s[tm][jn] = vis ? (pc.s.signed_weights != 0 ? abs(lg) : lg) : NEG_INF;
        mt = max(mt, s[tm][jn]);
      }
      for (uint o = 1u; o < CT; o <<= 1u) mt = max(mt, subgroupShuffleXor(mt, o));
      const float mn = max(m[tm], mt);
      // mn = −inf: no key of the row so far; nothing to add or rescale.
      const float alpha = (mn == NEG_INF || m[tm] == NEG_INF) ? (mn == NEG_INF ? 1.0 : 0.0) : exp2((m[tm] - mn) * LOG2E);
      float psum = 0.0;
      for (uint jn = 0u; jn < TN; ++jn) {
        const float p = s[tm][jn] == NEG_INF ? 0.0 : exp2((s[tm][jn] - mn) * LOG2E);
        psum += p;
        Ps[(rg * TM + tm) * PS + ct + jn * CT] = p * sg[jn];
      }
      for (uint o = 1u; o < CT; o <<= 1u) psum += subgroupShuffleXor(psum, o);
      l[tm] = l[tm] * alpha + psum;
      m[tm] = mn;
      for (uint j = 0u; j < DPT4; ++j) acc[tm][j] *= alpha;
    }
    barrier();

    const uint keys = min(BC, k1 - t0);
    for (uint n = 0u; n < keys; ++n) {
      vec4 vv[DPT4];
      for (uint j = 0u; j < DPT4; ++j) vv[j] = Vs[n * DPV4 + ct + j * CT];
      for (uint tm = 0u; tm < TM; ++tm) {
        const float p = Ps[(rg * TM + tm) * PS + n];
        for (uint j = 0u; j < DPT4; ++j) acc[tm][j] += p * vv[j];
      }
    }
  }

  for (uint tm = 0u; tm < TM; ++tm) {
    const uint p = rb * BR + rg * TM + tm;
    if (p >= rows) continue;
    const uint r = packed_row(bh, p), orow = out_row(b, head_of(kvh, r), pos_of(r));
    if (pc.plan.splits > 1u) {
      for (uint j = 0u; j < DPT4; ++j) part_o[(orow * pc.plan.splits + split) * DPV4 + ct + j * CT] = acc[tm][j];
      if (ct == 0u) part_ml[orow * pc.plan.splits + split] = vec2(m[tm], l[tm]);
      continue;
    }
    const float gate = row_gate(orow);
    for (uint j = 0u; j < DPT4; ++j) {
      const vec4 o = l[tm] == 0.0 ? vec4(0.0) : acc[tm][j] / l[tm] * gate;
      for (uint e = 0u; e < 4u; ++e) {
        const uint x = (ct + j * CT) * 4u + e;
        if (x >= DV) continue;
        if (DTYPE == DT_F32) o1[orow * DV + x] = floatBitsToUint(o[e]);
        else o2[orow * DV + x] = uint16_t(f32_to_storage16(o[e], DTYPE));
      }
    }
    if (ct == 0u) lse[orow] = l[tm] == 0.0 ? NEG_INF : m[tm] + log(l[tm]);
  }
}
