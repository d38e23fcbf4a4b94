#version 450
// Attention for few query rows per KV head (decode, speculative verification, and any case the
// tiled kernel cannot hold): flash-decoding. A workgroup owns RB packed rows of one (batch, KV
// head) and one split of the keys; each key is read once per workgroup with 16-byte loads and
// serves all RB rows (GQA packing). T lanes share a key (each holding CPL 8-element chunks of
// the head dimension), and the workgroup's NT/T lane groups walk the split's keys U at a time
// with an online softmax each; a shared-memory pass merges the groups. With one split the
// workgroup writes O and LSE; with several it writes (m, l, unnormalised O) partials and
// attention_merge combines them. V rows may be narrower than K's (v_head_dim) and sit v_stride
// apart (MLA's absorbed form reads each key's first v_head_dim elements as its value). With
// head_sparse a workgroup's rows are positions of its group's row map (attention_common.glsl),
// and a block past the group's active rows exits before reading a key. With key_index the splits
// cut list positions and each position's K and V rows are its listed key's (key_row); with
// key_bias a logit adds the bias of that row. With tree_mask a row skips the tree keys that are not
// its ancestors (tree_sees).
//
// Lane groups are formed from gl_SubgroupID and gl_SubgroupInvocationID, and T divides the
// smallest subgroup size, so a group's shuffles never leave its subgroup, whatever the size.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint D = 128u;    // head_dim
layout(constant_id = 3) const uint NCH = 16u;   // 8-element chunks per row: ceil(D / 8)
layout(constant_id = 4) const uint T = 8u;      // lanes per key: a power of two dividing the subgroup
layout(constant_id = 5) const uint CPL = 2u;    // chunks per lane: ceil(NCH / T)
layout(constant_id = 6) const uint RB = 4u;     // packed rows per workgroup
layout(constant_id = 7) const uint U = 2u;      // keys per lane group per step
layout(constant_id = 8) const bool VEC = true;  // D·sizeof(dtype) is a multiple of 16
layout(constant_id = 9) const uint DV = 128u;   // v_head_dim: the width of V and O rows
layout(constant_id = 10) const uint VCH = 16u;  // 8-element chunks per V row: ceil(DV / 8)
layout(constant_id = 11) const uint VCPL = 2u;  // V chunks per lane: ceil(VCH / T)
layout(constant_id = 12) const bool VEC_V = true;  // v_stride·sizeof(dtype) is a multiple of 16

#include "attention_common.glsl"

const uint NT = gl_WorkGroupSize.x;
const uint NG = NT / T;   // lane groups
const uint E = CPL * 8u;    // head-dim elements of q per lane
const uint EV = VCPL * 8u;  // v_head_dim elements of O per lane
const uint DPV4 = VCH * 2u; // vec4s per padded O row

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

shared float sh_m[NG * RB];
shared float sh_l[NG * RB];
shared vec4 sh_o[NG * RB * DPV4];

void main() {
  const uint wg = workgroup_index();
  if (wg >= pc.plan.groups) return;
  // Row blocks innermost: the workgroups sharing a split's keys run together and read them
  // from DRAM once.
  const uint rb = wg % pc.plan.row_blocks;
  const uint split = (wg / pc.plan.row_blocks) % pc.plan.splits;
  const uint bh = wg / (pc.plan.row_blocks * pc.plan.splits);
  const uint b = bh / uint(pc.s.kv_heads), kvh = bh % uint(pc.s.kv_heads);
  const uint rows = task_rows(bh);
  if (rb * RB >= rows) return;  // the whole workgroup: no active row in its block
  const uint kvlen = uint(clamp(kv_len[kv_len_index(b, kvh)], 0, pc.s.kv_cap));

  const uint vl = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
  const uint grp = vl / T, lane = vl % T;

  float q[RB][E];
  float acc[RB][EV];
  float m[RB], l[RB];
  uint vend[RB], vbeg[RB], vsink[RB], qi[RB];
  float slope[RB], qpos[RB];
  uint block_end = 0u, sink_max = 0u, begin_min = 0xffffffffu;
  for (uint rr = 0u; rr < RB; ++rr) {
    const uint p = rb * RB + rr;
    vend[rr] = vbeg[rr] = vsink[rr] = qi[rr] = 0u;
    slope[rr] = qpos[rr] = 0.0;
    m[rr] = NEG_INF;
    l[rr] = 0.0;
    for (uint x = 0u; x < E; ++x) q[rr][x] = 0.0;
    for (uint x = 0u; x < EV; ++x) acc[rr][x] = 0.0;
    if (p >= rows) continue;
    const uint r = packed_row(bh, p), i = pos_of(r);
    qi[rr] = i;
    vend[rr] = visible_end(kvlen, i);
    vbeg[rr] = window_begin(vend[rr]);
    vsink[rr] = sink_end(vbeg[rr]);
    if (pc.s.alibi != 0) slope[rr] = alibi_slopes[head_of(kvh, r)];
    qpos[rr] = float(int(kvlen) - pc.s.q_len + int(i));
    block_end = max(block_end, vend[rr]);
    sink_max = max(sink_max, vsink[rr]);
    begin_min = min(begin_min, vbeg[rr]);
    const uint qbase = out_row(b, head_of(kvh, r), i) * D;
    for (uint j = 0u; j < CPL; ++j) {
      const uint c = lane + j * T;
      if (c >= NCH) continue;
      vec4 lo, hi;
      load_q(qbase + c * 8u, D - c * 8u, lo, hi);
      for (uint e = 0u; e < 4u; ++e) {
        q[rr][j * 8u + e] = lo[e];
        q[rr][j * 8u + 4u + e] = hi[e];
      }
    }
  }

  // The splits cut the keys the group's rows see: from its first row's window start (0 without
  // a window), the sinks going with split 0; the gap between sinks and window is skipped.
  const uint first = window_begin(visible_end(kvlen, 0u));  // attention_common.h split_origin()
  const uint k0 = split == 0u ? 0u : first + split * pc.plan.split_len;
  const uint k1 = min(first + (split + 1u) * pc.plan.split_len, block_end);
  const uint vstride = uint(pc.s.v_stride);
  for (uint base = k0; base < k1; base += NG * U) {
    if (base >= sink_max && base < begin_min) base = begin_min;
    if (base >= k1) break;
    // Every load of the step is issued before the first use.
    vec4 kk[U][CPL][2], vv[U][VCPL][2];
    uint krow[U];  // each key's row of K, V and key_bias (key_row: positions past k1 have none)
    for (uint u = 0u; u < U; ++u) {
      const uint n = base + u * NG + grp;
      krow[u] = n < k1 ? key_row(b, kvh, n) : 0u;
      for (uint j = 0u; j < CPL; ++j) {
        const uint c = lane + j * T;
        kk[u][j][0] = kk[u][j][1] = vec4(0.0);
        if (n < k1 && c < NCH) load_k(krow[u] * D + c * 8u, D - c * 8u, kk[u][j][0], kk[u][j][1]);
      }
      for (uint j = 0u; j < VCPL; ++j) {
        const uint c = lane + j * T;
        vv[u][j][0] = vv[u][j][1] = vec4(0.0);
        if (n < k1 && c < VCH) load_v(krow[u] * vstride + c * 8u, DV - c * 8u, vv[u][j][0], vv[u][j][1]);
      }
    }
    for (uint rr = 0u; rr < RB; ++rr) {
      float s[U];
      for (uint u = 0u; u < U; ++u) {
        float dot = 0.0;
        for (uint j = 0u; j < CPL; ++j)
          for (uint e = 0u; e < 4u; ++e) {
            dot += q[rr][j * 8u + e] * kk[u][j][0][e];
            dot += q[rr][j * 8u + 4u + e] * kk[u][j][1][e];
          }
        for (uint o = 1u; o < T; o <<= 1u) dot += subgroupShuffleXor(dot, o);
        s[u] = dot * pc.s.scale;
      }
      float mt = NEG_INF;
      float sg[U];  // cog's signs (1 otherwise): the softmax runs over |logit|
      for (uint u = 0u; u < U; ++u) {
        const uint n = base + u * NG + grp;
        const bool vis = n < k1 && key_visible(n, vsink[rr], vbeg[rr], vend[rr]) && tree_sees(b, qi[rr], kvlen, n);
        const float lg = vis ? with_key_bias(final_logit(s[u], n, slope[rr], qpos[rr]), krow[u]) : 0.0;
        sg[u] = pc.s.signed_weights != 0 ? sign(lg) : 1.0;
        s[u] = vis ? (pc.s.signed_weights != 0 ? abs(lg) : lg) : NEG_INF;
        mt = max(mt, s[u]);
      }
      if (mt == NEG_INF) continue;  // nothing visible to this row in this step
      if (mt > m[rr]) {
        const float alpha = m[rr] == NEG_INF ? 0.0 : exp2((m[rr] - mt) * LOG2E);
        l[rr] *= alpha;
        for (uint x = 0u; x < EV; ++x) acc[rr][x] *= alpha;
        m[rr] = mt;
      }
      for (uint u = 0u; u < U; ++u) {
        const float e = s[u] == NEG_INF ? 0.0 : exp2((s[u] - m[rr]) * LOG2E);
        l[rr] += e;
        const float p = e * sg[u];
        for (uint j = 0u; j < VCPL; ++j)
          for (uint e = 0u; e < 4u; ++e) {
            acc[rr][j * 8u + e] += p * vv[u][j][0][e];
            acc[rr][j * 8u + 4u + e] += p * vv[u][j][1][e];
          }
      }
    }
  }

  // Merge the lane groups: rescale each to the block's maximum, then sum in shared memory.
  if (lane == 0u)
    for (uint rr = 0u; rr < RB; ++rr) {
      sh_m[grp * RB + rr] = m[rr];
      sh_l[grp * RB + rr] = l[rr];
    }
  barrier();
  for (uint rr = 0u; rr < RB; ++rr) {
    float mx = NEG_INF;
    for (uint g = 0u; g < NG; ++g) mx = max(mx, sh_m[g * RB + rr]);
    const float w = m[rr] == NEG_INF ? 0.0 : exp2((m[rr] - mx) * LOG2E);
    for (uint j = 0u; j < VCPL; ++j) {
      const uint c = lane + j * T;
      if (c >= VCH) continue;
      const uint at = (grp * RB + rr) * DPV4 + c * 2u;
      sh_o[at] = w * vec4(acc[rr][j * 8u], acc[rr][j * 8u + 1u], acc[rr][j * 8u + 2u], acc[rr][j * 8u + 3u]);
      sh_o[at + 1u] = w * vec4(acc[rr][j * 8u + 4u], acc[rr][j * 8u + 5u], acc[rr][j * 8u + 6u], acc[rr][j * 8u + 7u]);
    }
  }
  barrier();
  for (uint idx = gl_LocalInvocationIndex; idx < RB * DPV4; idx += NT) {
    const uint rr = idx / DPV4, x4 = idx % DPV4;
    const uint p = rb * RB + rr;
    if (p >= rows) continue;
    float mx = NEG_INF;
    for (uint g = 0u; g < NG; ++g) mx = max(mx, sh_m[g * RB + rr]);
    float total = 0.0;
    vec4 o = vec4(0.0);
    for (uint g = 0u; g < NG; ++g) {
      const float lg = sh_l[g * RB + rr];
      if (lg == 0.0) continue;
      total += lg * exp2((sh_m[g * RB + rr] - mx) * LOG2E);
      o += sh_o[(g * RB + rr) * DPV4 + x4];
    }
    const uint r = packed_row(bh, p), orow = out_row(b, head_of(kvh, r), pos_of(r));
    if (pc.plan.splits > 1u) {
      part_o[(orow * pc.plan.splits + split) * DPV4 + x4] = o;
      if (x4 == 0u) part_ml[orow * pc.plan.splits + split] = vec2(mx, total);
      continue;
    }
    o = total == 0.0 ? vec4(0.0) : o / total * row_gate(orow);
    for (uint e = 0u; e < 4u; ++e) {
      const uint x = x4 * 4u + e;
      if (x >= DV) break;
      if (DTYPE == DT_F32) o1[orow * DV + x] = floatBitsToUint(o[e]);
      else o2[orow * DV + x] = uint16_t(f32_to_storage16(o[e], DTYPE));
    }
    if (x4 == 0u) lse[orow] = total == 0.0 ? NEG_INF : mx + log(total);
  }
}
