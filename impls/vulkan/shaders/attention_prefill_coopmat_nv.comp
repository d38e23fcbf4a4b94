#version 450
// Tiled prefill attention on NVIDIA's cooperative matrices (VK_NV_cooperative_matrix), f16 only:
// the NV v1 extension has no bf16. Each subgroup (warp) owns MM packed rows of a workgroup's
// BR = NW·MM; Q stays in A-fragments for the whole key loop. Per tile of BC keys:
//   S = Q·Kᵀ on the tensor cores (K read from shared memory as a column-major B),
//   S goes through shared memory to the warp's lanes (the NV v1 fragments are opaque), which
//   mask it (causal, ragged, split end), update the row's running max and sum, and write
//   P = exp(S − m) as f16 back to shared memory,
//   O += P·V on the tensor cores, O held in f32 accumulators.
// The running max is raised lazily: only when a tile's max exceeds it by more than TAU, so P
// stays below e^TAU (far inside f16) and the accumulators, which NV v1 cannot scale per row,
// go through shared memory to be rescaled only on those rare tiles.
//
// Shared memory is one explicitly laid-out block (VK_KHR_workgroup_memory_explicit_layout) seen
// as f16, 16-byte and f32 arrays, so tiles are copied with 16-byte stores and read by the
// cooperative loads without any question of units:
//   [K tile BC×DS | V tile BC×DS]  (halves; the Q tile is staged here before the first tile)
//   [S staging: NW × MM×SS f32]    [P: NW × MM×PS f16]
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shared_memory_block : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint D = 128u;          // head_dim, a multiple of 16
layout(constant_id = 2) const uint BC = 48u;          // keys per tile, a multiple of 16
layout(constant_id = 3) const uint MM = 16u;          // cooperative-matrix shape M x N x K
layout(constant_id = 4) const uint NN = 16u;
layout(constant_id = 5) const uint KK = 16u;
layout(constant_id = 6) const uint SG = 32u;          // subgroup size (NVIDIA: 32)
layout(constant_id = 7) const uint SMEM_WORDS = 1024u;  // the shared block, in 32-bit words

#include "attention_common.glsl"

const uint NT = gl_WorkGroupSize.x;
const uint NW = NT / SG;       // warps
const uint BR = NW * MM;       // packed rows per workgroup
const uint DS = D + 8u;        // K/V/Q row stride in halves: 16 bytes of pad against bank conflicts
const uint SS = BC + 4u;       // S staging row stride in floats
const uint PS = BC + 8u;       // P row stride in halves
const uint S_F = BC * DS;      // S staging start, in floats (after K and V: 2·BC·DS halves)
const uint P_H = 2u * (S_F + NW * MM * SS);  // P start, in halves
const uint LPR = SG / MM;      // lanes per row in the softmax
const uint CPR = BC / LPR;     // columns per lane
const uint D8 = D / 8u;
const float TAU = 8.0;         // lazy rescaling threshold, natural-log units

#define MatA fcoopmatNV<16, gl_ScopeSubgroup, MM, KK>
#define MatB fcoopmatNV<16, gl_ScopeSubgroup, KK, NN>
#define MatC fcoopmatNV<32, gl_ScopeSubgroup, MM, NN>

layout(binding = 0) readonly buffer Q4 { uvec4 q4[]; };
layout(binding = 1) readonly buffer K4 { uvec4 k4[]; };
layout(binding = 2) readonly buffer V4 { uvec4 v4[]; };
layout(binding = 3) readonly buffer KvLen { int kv_len[]; };
layout(binding = 4) writeonly buffer O4 { uvec4 o4[]; };
layout(binding = 4) writeonly buffer O16 { uint16_t o2[]; };
layout(binding = 5) writeonly buffer Lse { float lse[]; };
layout(binding = 6) writeonly buffer PartMl { vec2 part_ml[]; };
layout(binding = 7) writeonly buffer PartO { float part_o[]; };
layout(binding = 8) readonly buffer Slopes { float alibi_slopes[]; };  // [q_heads] with alibi

shared SmemH { float16_t h[SMEM_WORDS * 2u]; } smh;
shared SmemV { uvec4 v[SMEM_WORDS / 4u]; } smv;
shared SmemF { float f[SMEM_WORDS]; } smf;

void warp_sync() {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

void main() {
  const uint wg = workgroup_index();
  if (wg >= pc.plan.groups) return;
  const uint split = wg % pc.plan.splits;
  const uint bh = (wg / pc.plan.splits) % (uint(pc.s.batch) * uint(pc.s.kv_heads));
  const uint rb = pc.plan.row_blocks - 1u - wg / (pc.plan.splits * uint(pc.s.batch) * uint(pc.s.kv_heads));
  const uint b = bh / uint(pc.s.kv_heads), kvh = bh % uint(pc.s.kv_heads);
  const uint kvlen = uint(clamp(kv_len[kv_len_index(b, kvh)], 0, pc.s.kv_cap));
  const uint tid = gl_LocalInvocationIndex;
  const uint w = gl_SubgroupID, ln = gl_SubgroupInvocationID;
  const uint row = ln / LPR, part = ln % LPR;  // this lane's row of its warp in the softmax
  const uint sbase = S_F + w * MM * SS, pbase = P_H + w * MM * PS;

  // Q tile, staged through the K/V region into A-fragments.
  for (uint idx = tid; idx < BR * D8; idx += NT) {
    const uint lr = idx / D8, c = idx % D8, r = rb * BR + lr;
    uvec4 val = uvec4(0u);
    if (r < pc.plan.rows) val = q4[(out_row(b, head_of(kvh, r), pos_of(r)) * D + c * 8u) / 8u];
    smv.v[(lr * DS + c * 8u) / 8u] = val;
  }
  barrier();
  MatA qf[D / KK];
  for (uint k = 0u; k < D / KK; ++k) coopMatLoadNV(qf[k], smh.h, (w * MM) * DS + k * KK, DS, false);

  const uint r = rb * BR + w * MM + row;
  const uint vend = r < pc.plan.rows ? visible_end(kvlen, pos_of(r)) : 0u;
  const uint vbeg = window_begin(vend), vsink = sink_end(vbeg);
  const float slope = pc.s.alibi != 0 && r < pc.plan.rows ? alibi_slopes[head_of(kvh, r)] : 0.0;
  const float qpos = float(int(kvlen) - pc.s.q_len + int(pos_of(r)));
  float m = NEG_INF, l = 0.0;
  MatC o[D / NN];
  for (uint j = 0u; j < D / NN; ++j) o[j] = MatC(0.0);

  const uint last = min(pc.plan.rows, rb * BR + BR) - 1u;
  const uint k0 = split * pc.plan.split_len;
  const uint k1 = min(k0 + pc.plan.split_len, visible_end(kvlen, pos_of(last)));
  const uint kvbase = (b * uint(pc.s.kv_heads) + kvh) * uint(pc.s.kv_cap) * D;
  // Keys no row of the block sees (between the last row's sinks and the first row's window).
  const uint begin_min = window_begin(visible_end(kvlen, pos_of(rb * BR)));
  const uint sink_max = sink_end(window_begin(visible_end(kvlen, pos_of(last))));

  for (uint t0 = k0; t0 < k1; t0 += BC) {
    if (t0 >= sink_max && t0 < begin_min) t0 = begin_min;
    if (t0 >= k1) break;
    barrier();  // every warp is done with the previous tile (or the Q staging)
    for (uint idx = tid; idx < BC * D8; idx += NT) {
      const uint key = idx / D8, c = idx % D8, n = t0 + key;
      uvec4 kv = uvec4(0u), vv = uvec4(0u);  // zero past the end: padding (NaN) never enters P·V
      if (n < k1) {
        kv = k4[(kvbase + n * D + c * 8u) / 8u];
        vv = v4[(kvbase + n * D + c * 8u) / 8u];
      }
      smv.v[(key * DS + c * 8u) / 8u] = kv;
      smv.v[((BC + key) * DS + c * 8u) / 8u] = vv;
    }
    barrier();

    for (uint jn = 0u; jn < BC / NN; ++jn) {
      MatC sacc = MatC(0.0);
      for (uint k = 0u; k < D / KK; ++k) {
        MatB kb;
        coopMatLoadNV(kb, smh.h, (jn * NN) * DS + k * KK, DS, true);  // Kᵀ: column n is key n
        sacc = coopMatMulAddNV(qf[k], kb, sacc);
      }
      coopMatStoreNV(sacc, smf.f, sbase + jn * NN, SS, false);
    }
    warp_sync();

    float sv[CPR], sg[CPR];  // sg: cog's signs (1 otherwise): the softmax runs over |logit|
    float mt = NEG_INF;
    for (uint c = 0u; c < CPR; ++c) {
      const uint col = part + c * LPR, n = t0 + col;
      const bool vis = n < k1 && key_visible(n, vsink, vbeg, vend);
      const float lg = vis ? final_logit(smf.f[sbase + row * SS + col] * pc.s.scale, n, slope, qpos) : 0.0;
      sg[c] = pc.s.signed_weights != 0 ? sign(lg) : 1.0;
      sv[c] = vis ? (pc.s.signed_weights != 0 ? abs(lg) : lg) : NEG_INF;
      mt = max(mt, sv[c]);
    }
    for (uint off = 1u; off < LPR; off <<= 1u) mt = max(mt, subgroupShuffleXor(mt, off));
    float mn = m;
    bool rescale = false;
    if (m == NEG_INF) {
      mn = mt;  // the first keys of the row: O and l are still 0, nothing to rescale
    } else if (mt > m + TAU) {
      mn = mt;
      rescale = true;
    }
    const float alpha = rescale ? exp2((m - mn) * LOG2E) : 1.0;
    float psum = 0.0;
    for (uint c = 0u; c < CPR; ++c) {
      const float p = sv[c] == NEG_INF ? 0.0 : exp2((sv[c] - mn) * LOG2E);
      psum += p;
      smh.h[pbase + row * PS + part + c * LPR] = float16_t(p * sg[c]);
    }
    for (uint off = 1u; off < LPR; off <<= 1u) psum += subgroupShuffleXor(psum, off);
    l = l * alpha + psum;
    m = mn;
    const bool any_rescale = subgroupAny(rescale);
    warp_sync();

    if (any_rescale) {
      for (uint jd = 0u; jd < D / NN; ++jd) {
        coopMatStoreNV(o[jd], smf.f, sbase, SS, false);
        warp_sync();
        for (uint c = part; c < NN; c += LPR) smf.f[sbase + row * SS + c] *= alpha;
        warp_sync();
        coopMatLoadNV(o[jd], smf.f, sbase, SS, false);
        warp_sync();
      }
    }

    MatA pa[BC / KK];
    for (uint jk = 0u; jk < BC / KK; ++jk) coopMatLoadNV(pa[jk], smh.h, pbase + jk * KK, PS, false);
    for (uint jd = 0u; jd < D / NN; ++jd)
      for (uint jk = 0u; jk < BC / KK; ++jk) {
        MatB vb;
        coopMatLoadNV(vb, smh.h, (BC + jk * KK) * DS + jd * NN, DS, false);
        o[jd] = coopMatMulAddNV(pa[jk], vb, o[jd]);
      }
  }

  // Epilogue: each O fragment goes through the warp's staging area to its row's lanes.
  const bool valid = r < pc.plan.rows;
  const uint orow = valid ? out_row(b, head_of(kvh, r), pos_of(r)) : 0u;
  for (uint jd = 0u; jd < D / NN; ++jd) {
    warp_sync();
    coopMatStoreNV(o[jd], smf.f, sbase, SS, false);
    warp_sync();
    if (!valid) continue;
    if (pc.plan.splits > 1u) {
      for (uint c = part; c < NN; c += LPR)
        part_o[(orow * pc.plan.splits + split) * D + jd * NN + c] = smf.f[sbase + row * SS + c];
    } else if (NN == 8u * LPR) {
      // Eight consecutive columns per lane: one 16-byte store.
      uint h[8];
      for (uint e = 0u; e < 8u; ++e) {
        const float x = smf.f[sbase + row * SS + part * 8u + e];
        h[e] = f32_to_f16_rne(l == 0.0 ? 0.0 : x / l);
      }
      o4[(orow * D + jd * NN + part * 8u) / 8u] =
          uvec4(h[0] | (h[1] << 16), h[2] | (h[3] << 16), h[4] | (h[5] << 16), h[6] | (h[7] << 16));
    } else {
      for (uint c = part; c < NN; c += LPR) {
        const float x = smf.f[sbase + row * SS + c];
        o2[orow * D + jd * NN + c] = uint16_t(f32_to_f16_rne(l == 0.0 ? 0.0 : x / l));
      }
    }
  }
  if (valid && part == 0u) {
    if (pc.plan.splits > 1u) part_ml[orow * pc.plan.splits + split] = vec2(m, l);
    else lse[orow] = l == 0.0 ? NEG_INF : m + log(l);
  }
}
