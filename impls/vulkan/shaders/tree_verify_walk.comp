#version 450
// tree_verify's stochastic modes, rejection and rejection_wor (reference/decoding/tree_verify.cpp;
// the host side and the plan in decoding/tree_verify_vulkan.cpp): a team of TEAM lanes walks one
// row's tree from the root. Every decision is the team's (reduced values, or reads of one address
// by every lane), so the whole team takes the same path; only the V-wide work is spread.
//   - Children of u in node index order: lanes scan `parents` strided, the team keeps the least.
//   - Child c with token x, U = U("spec.accept", row·(n − 1) + c − 1): the node's first test is
//     U·q(x) < p(x) on the f32 inputs (speculative_sampling_race.comp's expression), later ones
//     U·g(x) < r(x) in fp64.
//   - A rejection is one pass over V: w = max(0, r − g) in fp64 written to the row's scratch slot
//     (W, unnormalised: the race needs fp32(w)), and for rejection_wor g with x zeroed (G, before
//     its normalisation); one team reduction gives Σw, Σg, whether some fp32(w) is nonzero, and
//     the next child's w and g (its owner lane's, the others add zeros: exact). The normalised
//     r = W/Σw and g = G/Σg are formed where they are read, each element one division as the spec
//     has it (0 when the sum is 0), so nothing is written twice.
//   - Every child rejected: the race (race.glsl) over fp32(W), over p_u when that is all zero; a
//     leaf: over p_u. U("spec.race", (row·n + u)·V + y).
// A lane reads back only scratch elements it wrote: the passes at node u give lane k the tokens of
// Philox blocks k, k + TEAM, ... of u's race stretch, which race_span gives it too. So no memory
// barrier is needed on the scratch, and a pass costs one read and one write per element.
// Reductions: shuffles within a team (WIDE false: TEAM lanes, the smallest subgroup, many rows a
// workgroup); WIDE: the workgroup is the team, a subgroup butterfly then a shared-memory tree over
// the subgroups, log steps (lavapipe's loop limiter counts every iteration). Butterflies and the
// tree have a fixed order and give every lane the same bits, so reruns match.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TEAM = 4u;       // lanes per row: a power of two
layout(constant_id = 2) const bool WIDE = false;    // the team is the workgroup (else within a subgroup)
layout(constant_id = 3) const uint SUBGROUPS = 1u;  // WIDE: the most subgroups a workgroup holds

#include "param_struct.glsl"
#include "reference/decoding/tree_common.h"
#include "tree_verify_walk_plan.glsl"
#include "speculative_sampling_draws.glsl"
#include "team_reduce.glsl"

ATTNBENCH_PARAM_STRUCT(TreeVerifyParams, ATTNBENCH_TREE_VERIFY_FIELDS)
ATTNBENCH_PARAM_STRUCT(TreeVerifyWalkPlan, ATTNBENCH_TREE_VERIFY_WALK_PLAN)

layout(push_constant) uniform Push {
  TreeVerifyParams p;
  TreeVerifyWalkPlan plan;
} pc;

layout(binding = 0) readonly buffer Target { float target[]; };       // [batch, n, V]
layout(binding = 1) readonly buffer Draft { float draft[]; };         // [batch, n, V]
layout(binding = 2) readonly buffer Tokens { int tokens[]; };         // [rows, n]
layout(binding = 3) readonly buffer Parents { int parents[]; };       // [batch, n]
layout(binding = 4) readonly buffer Retrieve { int retrieve[]; };     // [batch, n, L]
layout(binding = 5) readonly buffer Leaves { int n_leaves[]; };       // [batch]
layout(binding = 6) writeonly buffer Out { int tokens_out[]; };       // [rows, L]
layout(binding = 7) writeonly buffer Emitted { int emitted[]; };      // [rows]
layout(binding = 8) writeonly buffer Len { int accept_len[]; };       // [rows]
layout(binding = 9) writeonly buffer Best { int best_path[]; };       // [rows]
layout(binding = 10) writeonly buffer Nodes { int accepted_nodes[]; };  // [rows, L]
layout(binding = 11) buffer Scratch { double scratch[]; };            // [row_end − row0, W (V), G (V, wor)]

const uint NONE = 0xffffffffu;

// What one reduction carries: fp64 sums, a minimum and a maximum.
struct TeamFold {
  dvec4 sum;
  uint lo, hi;
};

shared dvec4 walk_sh_sum[SUBGROUPS];
shared uvec2 walk_sh_range[SUBGROUPS];

double shuffle_xor_f64(double v, uint o) {
  const uvec2 w = unpackDouble2x32(v);
  return packDouble2x32(uvec2(subgroupShuffleXor(w.x, o), subgroupShuffleXor(w.y, o)));
}

// a + b is b + a bit for bit, so both lanes of a butterfly pair keep the same values.
TeamFold fold_with_lane(TeamFold a, uint o) {
  const dvec4 s = dvec4(shuffle_xor_f64(a.sum.x, o), shuffle_xor_f64(a.sum.y, o), shuffle_xor_f64(a.sum.z, o),
                        shuffle_xor_f64(a.sum.w, o));
  return TeamFold(a.sum + s, min(a.lo, subgroupShuffleXor(a.lo, o)), max(a.hi, subgroupShuffleXor(a.hi, o)));
}

// The team's fold, on every lane. WIDE: the whole workgroup calls it together (barriers).
TeamFold team_fold(TeamFold a) {
  const uint width = WIDE ? gl_SubgroupSize : TEAM;
  for (uint o = 1u; o < width; o <<= 1u) a = fold_with_lane(a, o);
  if (!WIDE) return a;
  if (gl_SubgroupInvocationID == 0u) {
    walk_sh_sum[gl_SubgroupID] = a.sum;
    walk_sh_range[gl_SubgroupID] = uvec2(a.lo, a.hi);
  }
  barrier();
  // Power-of-two workgroups and subgroups: the subgroups halve exactly.
  const uint i = gl_LocalInvocationIndex;
  for (uint h = gl_NumSubgroups >> 1u; h > 0u; h >>= 1u) {
    if (i < h) {
      walk_sh_sum[i] += walk_sh_sum[i + h];
      const uvec2 mine = walk_sh_range[i], other = walk_sh_range[i + h];
      walk_sh_range[i] = uvec2(min(mine.x, other.x), max(mine.y, other.y));
    }
    barrier();
  }
  a = TeamFold(walk_sh_sum[0], walk_sh_range[0].x, walk_sh_range[0].y);
  barrier();
  return a;
}

// The team's least v: shuffles alone in a narrow team (no doubles to carry), else the fold.
uint team_least(uint v) {
  if (WIDE) return team_fold(TeamFold(dvec4(0.0lf), v, 0u)).lo;
  for (uint o = 1u; o < TEAM; o <<= 1u) v = min(v, subgroupShuffleXor(v, o));
  return v;
}

// The first child of node u (tree offset `tree`) with index ≥ from, in node index order; NONE if none.
uint next_child(uint tree, uint u, uint from, uint n, uint lane) {
  uint found = NONE;
  for (uint v = max(from, 1u) + lane; v < n; v += TEAM)
    if (parents[tree + v] == int(u)) {
      found = v;  // lanes scan ascending: a lane's first is its least
      break;
    }
  return team_least(found);
}

// The element of token 0 of the race at node u of `row`: (row·n + u)·V in 64 bits (tree_race_index).
uvec2 tree_race_first(uint row, uint n, uint u, uint V) {
  const uvec2 a = add_wide(mul_wide(row, n), u);
  uvec2 f = mul_wide(a.x, V);
  f.y += a.y * V;
  return f;
}

// The race's weights: fp32 of the last residual, or p_u.
uint g_prow, g_slot;
bool g_residual;
float race_log_weight(uint x) {
  const float w = g_residual ? float(scratch[g_slot + x]) : target[g_prow + x];
  return w > 0.0 ? accurate_log(w) : ACC_NEG_INF;
}

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;  // whole workgroups
  const uint lane = team_lane();
  const uint row = pc.plan.row0 + wg * (gl_WorkGroupSize.x / TEAM) + team_of_lane();
  if (row >= pc.plan.row_end) return;  // whole teams (WIDE: the whole workgroup)
  const uint n = uint(pc.p.nodes), V = uint(pc.p.vocab), L = uint(pc.p.max_depth) + 1u;
  const bool wor = pc.p.mode == 3;  // rejection_wor (tree_common.h)
  const uint tree = (pc.p.batch == 1 ? 0u : row) * n;  // tree_of_row
  const uvec2 key = uvec2(pc.p.seed_lo, pc.p.seed_hi);
  const uint slot = (row - pc.plan.row0) * (wor ? 2u : 1u) * V;  // W; G follows it
  const uint out0 = row * L;

  if (lane == 0u) accepted_nodes[out0] = 0;
  uint u = 0u, len = 0u, winner = 0u;
  while (true) {
    const uint prow = (tree + u) * V;
    const uvec2 first = tree_race_first(row, n, u, V);
    const RaceStretch st = race_stretch(first, 0u);
    const uint blocks = race_stretch_blocks(st, V);
    // A node at depth D is a leaf in every generated tree; the bound keeps the outputs in the row.
    uint c = len + 1u < L ? next_child(tree, u, 1u, n, lane) : NONE;
    bool rejected = false, accepted = false, nonzero = false;
    double z = 0.0lf, t = 0.0lf, rx = 0.0lf, gx = 0.0lf;
    int x = 0;
    while (c != NONE) {
      x = tokens[row * n + c];
      const float U = accept_uniform(key, pc.p.accept_stream, row, n - 1u, c - 1u);
      if (!rejected) accepted = U * draft[prow + uint(x)] < target[prow + uint(x)];
      else accepted = double(U) * gx < rx;
      if (accepted) break;
      const uint nc = next_child(tree, u, c + 1u, n, lane);
      const uint xn = nc != NONE ? uint(tokens[row * n + nc]) : NONE;
      TeamFold f = TeamFold(dvec4(0.0lf), NONE, 0u);
      for (uint blk = lane; blk < blocks; blk += TEAM) {
        for (uint j = 0u; j < 4u; ++j) {
          const int rel = int(4u * blk + j) - int(st.lead);
          if (rel < 0 || rel >= int(V)) continue;
          const uint y = uint(rel);
          double r, g;
          if (!rejected) {
            r = double(target[prow + y]);
            g = double(draft[prow + y]);
          } else {
            r = z > 0.0lf ? scratch[slot + y] / z : 0.0lf;
            g = !wor ? double(draft[prow + y]) : (t > 0.0lf ? scratch[slot + V + y] / t : 0.0lf);
          }
          const double w = max(r - g, 0.0lf);
          scratch[slot + y] = w;
          f.sum.x += w;
          if (float(w) != 0.0) f.hi = 1u;
          double gn = 0.0lf;
          if (wor) {
            gn = y == uint(x) ? 0.0lf : g;
            scratch[slot + V + y] = gn;
            f.sum.y += gn;
          }
          if (y == xn) f.sum.zw = dvec2(w, gn);
        }
      }
      f = team_fold(f);
      z = f.sum.x;
      t = f.sum.y;
      nonzero = f.hi != 0u;
      if (nc != NONE) {
        rx = z > 0.0lf ? f.sum.z / z : 0.0lf;
        gx = !wor ? double(draft[prow + xn]) : (t > 0.0lf ? f.sum.w / t : 0.0lf);
      }
      rejected = true;
      c = nc;
    }
    if (accepted) {
      if (lane == 0u) {
        tokens_out[out0 + len] = x;
        accepted_nodes[out0 + len + 1u] = int(c);
      }
      ++len;
      u = c;
      continue;
    }
    g_prow = prow;
    g_slot = slot;
    g_residual = rejected && nonzero;
    float best_key = ACC_NEG_INF;
    uint best = NONE;
    race_span(key, pc.p.race_stream, first, 0u, V, lane, TEAM, best_key, best);
    team_best(best_key, best);
    winner = best == NONE ? 0u : best;  // no candidate: token 0, as race.h says
    break;
  }

  // The lowest retrieve row whose column len is the last accepted node.
  const uint b = tree / n;
  const uint leaves = min(uint(max(n_leaves[b], 0)), n);
  uint path = NONE;
  for (uint l = lane; l < leaves; l += TEAM)
    if (retrieve[(tree + l) * L + len] == int(u)) {
      path = l;
      break;
    }
  path = team_least(path);

  for (uint k = lane; k < L; k += TEAM) {
    if (k == len) tokens_out[out0 + k] = int(winner);
    if (k > len) {
      tokens_out[out0 + k] = -1;
      accepted_nodes[out0 + k] = -1;
    }
  }
  if (lane == 0u) {
    emitted[row] = int(len + 1u);
    accept_len[row] = int(len);
    best_path[row] = path == NONE ? 0 : int(path);
  }
}
