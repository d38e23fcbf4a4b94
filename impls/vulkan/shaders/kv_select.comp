#version 450
// The family's selection (kvcomp/kv_stages.h; semantics: reference/kvcomp/scored_selection.h),
// one cache row (batch, KV head) per workgroup: the sinks, the top_k candidates by the tie rule
// (larger score first, then smaller index), the recent tokens, indices ascending; kept_len; −1
// beyond it up to the capacity. A row keeps sel.kept tokens, or row_budget[row] with per-row
// budgets; with every token forced (sinks = kv_len) nothing is selected, and a row that keeps
// every candidate takes them in order without reading a score.
//
// Selection is a radix select on the scores' order-preserving bit patterns: four passes of 8
// bits, each a shared-memory histogram of the candidates that still match the digits chosen so
// far and a workgroup scan (subgroup inclusive adds, then the subgroups' totals) over the digits
// in descending order, which finds the digit holding the k-th largest score. That yields the
// threshold score exactly, how many tokens score above it, and so how many of the tokens equal
// to it to keep — the first ones by index, which the tie rule asks for. One more pass in index
// order writes the kept indices: a scan of "equal to the threshold" counts ranks the ties, a
// scan of keep flags gives each kept token its slot.
// Lanes are vl = gl_SubgroupID·gl_SubgroupSize + gl_SubgroupInvocationID, and lane vl owns E
// consecutive tokens of each chunk, so scan order is index order.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_memory_scope_semantics : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint E = 4u;  // tokens per lane and chunk

const uint NT = gl_WorkGroupSize.x;
const uint DIGITS_PER_LANE = (256u + NT - 1u) / NT;

#include "param_struct.glsl"
#include "reference/kvcomp/scored_selection_common.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)

layout(binding = 0) readonly buffer Scores { float scores[]; };      // [score rows, candidates]
layout(binding = 1) readonly buffer RowBudget { int row_budget[]; };  // [rows], with per-row budgets
layout(binding = 2) writeonly buffer KeptIdx { int kept_idx[]; };    // [rows, capacity]
layout(binding = 3) writeonly buffer KeptLen { int kept_len[]; };    // [rows]

layout(push_constant) uniform Push {
  SelectionParams sel;
} pc;

shared uint hist[256];
shared uint sub_total[NT];
shared uint chosen[2];

// Unsigned integers in the order of the floats (no NaN); both zeros map to one value, so they
// tie as the reference's comparison says.
uint order_key(float s) {
  const uint u = s == 0.0 ? 0u : floatBitsToUint(s);
  return (u & 0x80000000u) != 0u ? ~u : u | 0x80000000u;
}

// Exclusive prefix sum of v over the lanes in vl order, and the workgroup's total.
uint workgroup_exclusive_add(uint v, out uint total) {
  const uint inclusive = subgroupInclusiveAdd(v);
  const uint sub = subgroupAdd(v);
  if (subgroupElect()) sub_total[gl_SubgroupID] = sub;
  barrier();
  uint before = 0u;
  total = 0u;
  for (uint s = 0u; s < gl_NumSubgroups; ++s) {
    const uint t = sub_total[s];
    if (s < gl_SubgroupID) before += t;
    total += t;
  }
  barrier();
  return before + inclusive - v;
}

void main() {
  const uint bg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (bg >= uint(pc.sel.batch * pc.sel.kv_heads)) return;
  const uint vl = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
  const uint T = uint(pc.sel.kv_len), S = uint(pc.sel.sinks), R = uint(pc.sel.recent);
  const uint kept = pc.sel.row_budgets != 0 ? clamp(uint(max(row_budget[bg], 0)), S + R, min(T, uint(pc.sel.capacity)))
                                           : uint(pc.sel.kept);
  const uint out_row = bg * uint(pc.sel.capacity), P = uint(pc.sel.candidates), k = kept - S - R;
  const uint in_row = (pc.sel.shared_scores != 0 ? bg / uint(pc.sel.kv_heads) : bg) * P;

  // A row that keeps every candidate takes them in order: no ranking, no score read (they may
  // never have been written: kvcomp::scores_needed). k is the workgroup's, so the branches are uniform.
  const bool all = k == P;
  for (uint j = vl; all && j < P; j += NT) kept_idx[out_row + S + j] = int(S + j);
  const bool ranked = k > 0u && !all;
  uint threshold = 0u, mask = 0u, need = k;  // need: tokens still to take at and below the threshold's digits
  if (ranked) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      for (uint d = vl; d < 256u; d += NT) hist[d] = 0u;
      barrier();
      for (uint c0 = 0u; c0 < P; c0 += NT * E)
        for (uint e = 0u; e < E; ++e) {
          const uint j = c0 + vl * E + e;
          if (j >= P) break;
          const uint key = order_key(scores[in_row + j]);
          if ((key & mask) == threshold) atomicAdd(hist[(key >> uint(shift)) & 255u], 1u, gl_ScopeWorkgroup, 0, 0);  // relaxed: barriers order it
        }
      barrier();
      // Lane vl owns digits 255 − vl·DPL − q (q < DPL): descending digits in lane order.
      uint own = 0u;
      for (uint q = 0u; q < DIGITS_PER_LANE; ++q) {
        const uint n = vl * DIGITS_PER_LANE + q;
        if (n < 256u) own += hist[255u - n];
      }
      uint total;
      uint above = workgroup_exclusive_add(own, total);
      for (uint q = 0u; q < DIGITS_PER_LANE; ++q) {
        const uint n = vl * DIGITS_PER_LANE + q;
        if (n >= 256u) break;
        const uint c = hist[255u - n];
        if (above < need && need <= above + c) {
          chosen[0] = 255u - n;
          chosen[1] = above;
        }
        above += c;
      }
      barrier();
      threshold |= chosen[0] << uint(shift);
      mask |= 255u << uint(shift);
      need -= chosen[1];
      barrier();  // chosen is read before any lane may write it again
    }
  }

  // Kept prefix tokens in index order: above the threshold, or equal to it among the first `need`.
  uint written = 0u, equal_seen = 0u;
  for (uint c0 = 0u; ranked && c0 < P; c0 += NT * E) {
    uint keys[E];
    uint n_equal = 0u;
    for (uint e = 0u; e < E; ++e) {
      const uint j = c0 + vl * E + e;
      keys[e] = j < P ? order_key(scores[in_row + j]) : 0u;
      if (j < P && keys[e] == threshold) ++n_equal;
    }
    uint total_equal, total_kept;
    uint rank = equal_seen + workgroup_exclusive_add(n_equal, total_equal);
    bool keep[E];
    uint n_keep = 0u;
    for (uint e = 0u; e < E; ++e) {
      const uint j = c0 + vl * E + e;
      keep[e] = false;
      if (j >= P) continue;
      if (keys[e] > threshold) keep[e] = true;
      else if (keys[e] == threshold) keep[e] = rank++ < need;
      if (keep[e]) ++n_keep;
    }
    uint slot = written + workgroup_exclusive_add(n_keep, total_kept);
    for (uint e = 0u; e < E; ++e)
      if (keep[e]) kept_idx[out_row + S + slot++] = int(S + c0 + vl * E + e);
    written += total_kept;
    equal_seen += total_equal;
  }
  // The forced tokens around the selected ones, −1 beyond the row's length.
  for (uint r = vl; r < uint(pc.sel.capacity); r += NT) {
    if (r < S) kept_idx[out_row + r] = int(r);
    else if (r >= S + k) kept_idx[out_row + r] = r < kept ? int(T - (kept - r)) : -1;
  }
  if (vl == 0u) kept_len[bg] = int(kept);
}
