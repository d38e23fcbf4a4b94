#version 450
// The SnapKV scorer's window scores (reference/kvcomp/snapkv_scorer.h, step 1): for every window
// query i of every query head, the softmax over its visible keys j ≤ E + i (E = kv_len −
// obs_window; with candidate_softmax over its visible candidates alone: tokenselect), and
// a_{h,j} = mean_i P_{h,i,j} for the candidates j ∈ [sinks, sinks + candidates) (snapkv: the
// prefix), with log_decay ≠ 0 each query's P weighted γ^(w−1−i) (zeromerge). All in fp32, exp and
// 1/l accurate to a few ulp (the SET tie band of methodology.md assumes exactly this).
//
// Two passes of this shader (MODE), both a tiled S = Q·Kᵀ: a workgroup owns one block of window
// rows of one (batch, KV head) — HB query heads of the group × WB window queries, so each K tile
// serves every head in the block (GQA) — and one split of the keys. Per tile of BC keys, the
// head dimension is staged DK at a time in shared memory (Q and K as f32, four rows or keys per
// vec4), and each thread accumulates a 4×4 block of S in registers.
//   MODE 0  softmax statistics: each thread keeps an online (max, sum) per row over its keys;
//           the row's threads merge in shared memory in a fixed order and write the split's
//           partial (m, l).
//   MODE 1  window sums: the partials of every split are merged to (m, weight/l) per row, S is
//           recomputed over the candidates, P = e^(s − m)·weight/l goes to shared memory, and each
//           (head, key) column is summed over the block's window rows in a fixed order:
//           a_part[(b, h), segment, j] (segments: blocks of WB window queries when the window is
//           longer than a block). The family's pooling stage (kv_pool.comp) adds the segments and
//           divides by obs_window.
// Every sum has a fixed order, so results do not depend on scheduling (the harness reruns the
// case and compares kept_idx bit for bit).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint D = 128u;    // head_dim
layout(constant_id = 3) const uint DK = 32u;    // head-dim elements per shared stage (a multiple of 8)
layout(constant_id = 4) const uint BR = 64u;    // window rows per block (a multiple of 4)
layout(constant_id = 5) const uint BC = 32u;    // keys per tile (a multiple of 4)
layout(constant_id = 6) const uint MODE = 0u;
layout(constant_id = 7) const bool VEC = true;  // D·sizeof(dtype) is a multiple of 16

#include "accurate_math.glsl"
#include "load8.glsl"

const uint NT = gl_WorkGroupSize.x;  // (BR / 4)·(BC / 4)
const uint R4 = BR / 4u, C4 = BC / 4u;
const uint PS = BC + 1u;  // row stride of P in shared memory

DECLARE_INPUT(0, q4, q2, q1)  // q_obs [batch, q_heads, obs_window, D]
DECLARE_INPUT(1, k4, k2, k1)  // k [batch, kv_heads, kv_len, D]
layout(binding = 2) buffer PartMl { vec2 part_ml[]; };  // [batch·q_heads·obs_window, stat_splits]
layout(binding = 3) writeonly buffer APart { float a_part[]; };  // [batch·q_heads, segments, candidates]

DEFINE_LOAD8(load_q, q4, q2, q1)
DEFINE_LOAD8(load_k, k4, k2, k1)

#include "param_struct.glsl"
#include "reference/kvcomp/snapkv_common.h"
#include "kvcomp/snapkv_plan.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(SnapkvParams, ATTNBENCH_SNAPKV_FIELDS)
ATTNBENCH_PARAM_STRUCT(ScoresPlan, ATTNBENCH_SNAPKV_SCORES_PLAN)

layout(push_constant) uniform Push {
  SelectionParams sel;
  SnapkvParams m;
  ScoresPlan plan;
} pc;

shared vec4 Qs[DK * R4];
shared vec4 Ks[DK * C4];
shared float Ps[MODE == 1u ? BR * PS : 1u];
shared vec2 Ml[MODE == 0u ? BR * C4 : BR];

void main() {
  const uint q_heads = uint(pc.sel.q_heads), kv_heads = uint(pc.sel.kv_heads), group = uint(pc.sel.group);
  const uint kv_len = uint(pc.sel.kv_len), window = uint(pc.m.obs_window), cands = uint(pc.sel.candidates);
  const uint first = uint(pc.sel.sinks), window_start = kv_len - window;  // window query i sits at window_start + i
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;
  // Row blocks per (batch, KV head), derived here (the push block has no room for it).
  const uint row_blocks = (group + pc.plan.heads_per_block - 1u) / pc.plan.heads_per_block * pc.plan.segments;
  const uint split = wg % pc.plan.splits;
  const uint rb = (wg / pc.plan.splits) % row_blocks;
  const uint bg = wg / (pc.plan.splits * row_blocks);
  const uint b = bg / kv_heads, g = bg % kv_heads;
  const uint head_block = rb / pc.plan.segments, segment = rb % pc.plan.segments;
  const uint h0 = head_block * pc.plan.heads_per_block, i0 = segment * pc.plan.rows_per_head;
  const uint heads = min(pc.plan.heads_per_block, group - h0);
  const uint queries = min(pc.plan.rows_per_head, window - i0);
  const uint tid = gl_LocalInvocationIndex;
  const uint rt = tid / C4, ct = tid % C4;

  // Block row lr: head h0 + lr / WB of the group, window query i0 + lr % WB.
  bool live[4];
  uint vis_end[4];  // MODE 0: keys visible to the row end here (bottom-right causal)
  for (uint m = 0u; m < 4u; ++m) {
    const uint lr = rt * 4u + m;
    live[m] = lr / pc.plan.rows_per_head < heads && lr % pc.plan.rows_per_head < queries;
    vis_end[m] = live[m] ? window_start + i0 + lr % pc.plan.rows_per_head + 1u : 0u;
  }
  // MODE 0 splits the keys of the softmax: all keys, or with candidate_softmax the candidates
  // alone (keys below sinks or from sinks + candidates on add nothing to m or l); MODE 1 the
  // candidates, which every window query sees.
  uint k0, k1;
  if (MODE == 0u) {
    const bool cand_only = pc.m.candidate_softmax != 0;
    k0 = (cand_only ? first : 0u) + split * pc.plan.split_len;
    k1 = min(min(cand_only ? first + cands : kv_len, k0 + pc.plan.split_len), window_start + i0 + queries);
  } else {
    k0 = first + split * pc.plan.split_len;
    k1 = min(first + cands, k0 + pc.plan.split_len);
  }

  float row_m[4], row_l[4];
  for (uint m = 0u; m < 4u; ++m) {
    row_m[m] = NEG_INF;
    row_l[m] = 0.0;
  }
  if (MODE == 1u) {
    // (m, weight/l) of each row from the statistics pass's partials, merged in split order; the
    // weight is the window query's decay γ^(w−1−i) = e^(log_decay·(w−1−i)) in fp32 (1 without
    // decay, as snapkv_query_weight()), so P = e^(s − m)·weight/l.
    for (uint lr = tid; lr < BR; lr += NT) {
      const uint hh = lr / pc.plan.rows_per_head, ii = lr % pc.plan.rows_per_head;
      vec2 ml = vec2(NEG_INF, 1.0);
      if (hh < heads && ii < queries) {
        const uint row = ((b * q_heads + g * group + h0 + hh) * window + i0 + ii) * pc.plan.stat_splits;
        float mx = NEG_INF;
        for (uint s = 0u; s < pc.plan.stat_splits; ++s) mx = max(mx, part_ml[row + s].x);
        float l = 0.0;
        for (uint s = 0u; s < pc.plan.stat_splits; ++s) {
          const vec2 p = part_ml[row + s];
          if (p.y > 0.0) l += p.y * accurate_exp(p.x - mx);
        }
        const float weight = pc.m.log_decay == 0.0 ? 1.0 : accurate_exp(pc.m.log_decay * float(window - 1u - (i0 + ii)));
        ml = vec2(mx, weight / l);
      }
      Ml[lr] = ml;
    }
    barrier();
    for (uint m = 0u; m < 4u; ++m) {
      row_m[m] = Ml[rt * 4u + m].x;
      row_l[m] = Ml[rt * 4u + m].y;  // weight/l
    }
  }

  const uint kbase = bg * kv_len;
  for (uint j0 = k0; j0 < k1; j0 += BC) {
    vec4 acc[4];
    for (uint m = 0u; m < 4u; ++m) acc[m] = vec4(0.0);
    for (uint x0 = 0u; x0 < D; x0 += DK) {
      barrier();  // the previous stage (and the previous tile's column sums) are done
      for (uint c = tid; c < BR * (DK / 8u); c += NT) {
        const uint lr = c / (DK / 8u), x = x0 + (c % (DK / 8u)) * 8u;
        const uint hh = lr / pc.plan.rows_per_head, ii = lr % pc.plan.rows_per_head;
        vec4 lo = vec4(0.0), hi = vec4(0.0);
        if (hh < heads && ii < queries && x < D)
          load_q(((b * q_heads + g * group + h0 + hh) * window + i0 + ii) * D + x, D - x, lo, hi);
        const uint at = (x - x0) * R4 + lr / 4u, comp = lr % 4u;
        for (uint e = 0u; e < 4u; ++e) {
          Qs[at + e * R4][comp] = lo[e];
          Qs[at + (e + 4u) * R4][comp] = hi[e];
        }
      }
      for (uint c = tid; c < BC * (DK / 8u); c += NT) {
        const uint lc = c / (DK / 8u), x = x0 + (c % (DK / 8u)) * 8u, j = j0 + lc;
        vec4 lo = vec4(0.0), hi = vec4(0.0);
        if (j < k1 && x < D) load_k((kbase + j) * D + x, D - x, lo, hi);
        const uint at = (x - x0) * C4 + lc / 4u, comp = lc % 4u;
        for (uint e = 0u; e < 4u; ++e) {
          Ks[at + e * C4][comp] = lo[e];
          Ks[at + (e + 4u) * C4][comp] = hi[e];
        }
      }
      barrier();
      for (uint x = 0u; x < DK; ++x) {
        const vec4 a = Qs[x * R4 + rt];
        const vec4 kk = Ks[x * C4 + ct];
        for (uint m = 0u; m < 4u; ++m) acc[m] += a[m] * kk;
      }
    }

    if (MODE == 0u) {
      for (uint m = 0u; m < 4u; ++m) {
        float s[4];
        float tile_max = NEG_INF;
        for (uint n = 0u; n < 4u; ++n) {
          const uint j = j0 + ct * 4u + n;
          s[n] = j < k1 && j < vis_end[m] ? acc[m][n] * pc.m.scale : NEG_INF;
          tile_max = max(tile_max, s[n]);
        }
        if (tile_max == NEG_INF) continue;
        if (tile_max > row_m[m]) {
          if (row_m[m] != NEG_INF) row_l[m] *= accurate_exp(row_m[m] - tile_max);
          row_m[m] = tile_max;
        }
        for (uint n = 0u; n < 4u; ++n)
          if (s[n] != NEG_INF) row_l[m] += accurate_exp(s[n] - row_m[m]);
      }
    } else {
      for (uint m = 0u; m < 4u; ++m)
        for (uint n = 0u; n < 4u; ++n) {
          const uint j = j0 + ct * 4u + n;
          // A candidate past the row's position (H2O's prompt rows) gets nothing from it.
          const float p = live[m] && j < k1 && j < vis_end[m] ? accurate_exp(acc[m][n] * pc.m.scale - row_m[m]) * row_l[m] : 0.0;
          Ps[(rt * 4u + m) * PS + ct * 4u + n] = p;
        }
      barrier();
      for (uint c = tid; c < pc.plan.heads_per_block * BC; c += NT) {
        const uint hh = c / BC, lc = c % BC, j = j0 + lc;
        if (hh >= heads || j >= k1) continue;
        float sum = 0.0;
        for (uint ii = 0u; ii < queries; ++ii) sum += Ps[(hh * pc.plan.rows_per_head + ii) * PS + lc];
        const uint bh = b * q_heads + g * group + h0 + hh;
        a_part[(bh * pc.plan.segments + segment) * cands + j - first] = sum;
      }
    }
  }

  if (MODE == 0u) {
    // Merge the row's C4 threads (keys ct·4 .. ct·4+3 of every tile) in thread order.
    for (uint m = 0u; m < 4u; ++m) Ml[(rt * 4u + m) * C4 + ct] = vec2(row_m[m], row_l[m]);
    barrier();
    for (uint lr = tid; lr < BR; lr += NT) {
      const uint hh = lr / pc.plan.rows_per_head, ii = lr % pc.plan.rows_per_head;
      if (hh >= heads || ii >= queries) continue;
      float mx = NEG_INF;
      for (uint c = 0u; c < C4; ++c) mx = max(mx, Ml[lr * C4 + c].x);
      float l = 0.0;
      for (uint c = 0u; c < C4; ++c) {
        const vec2 p = Ml[lr * C4 + c];
        if (p.y > 0.0) l += p.y * accurate_exp(p.x - mx);
      }
      const uint row = (b * q_heads + g * group + h0 + hh) * window + i0 + ii;
      part_ml[row * pc.plan.splits + split] = vec2(mx, l);
    }
  }
}
