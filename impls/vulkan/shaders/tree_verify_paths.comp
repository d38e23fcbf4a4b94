#version 450
// tree_verify, stage 2 (reference/decoding/tree_verify.cpp; stage 1 is tree_verify_nodes.comp):
// one workgroup per tree chooses its path and writes the outputs.
//   1. Lane k scores leaf paths l = k, k + T, ... as the CPU impl's choose() does: from the root,
//      draft x = tokens[v_t] is accepted by its parent u = v_{t−1} when x == argmax_u (greedy) or
//      p_u(x) > τ_u (typical; stage 1's figures), the path stopping at its first rejection; a
//      typical path's score is the fp32 sum of ln p_u(x) over its accepted prefix, in path order
//      (ln to about an ulp, accurate_math.glsl). The lane keeps its best path in ascending order
//      with strict compares, so among equals the lowest index stays.
//   2. A shared-memory tree merges the lanes' bests by (longest, highest score, lowest index): the
//      order choose()'s scan yields (greedy scores are all 0, so only length and index count).
//   3. Lanes over the D + 1 columns write tokens_out and accepted_nodes (every element: −1 past
//      emitted, the bonus token argmax at the last accepted node); lane 0 the per-tree scalars.
// No subgroup operation, so any subgroup size works. The only probabilities read here are the
// O(n·D) drafted ones; the vocabulary was read once, by stage 1.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

const uint T = gl_WorkGroupSize.x;  // a power of two (the host's plan)

#include "accurate_math.glsl"
#include "param_struct.glsl"
#include "reference/decoding/tree_common.h"

ATTNBENCH_PARAM_STRUCT(TreeVerifyParams, ATTNBENCH_TREE_VERIFY_FIELDS)

layout(push_constant) uniform Push {
  TreeVerifyParams p;
} pc;

layout(binding = 0) readonly buffer Probs { float probs[]; };        // [batch, n, V]
layout(binding = 1) readonly buffer Tokens { int tokens[]; };        // [batch, n]
layout(binding = 2) readonly buffer Retrieve { int retrieve[]; };    // [batch, n, L]
layout(binding = 3) readonly buffer Leaves { int n_leaves[]; };      // [batch]
layout(binding = 4) readonly buffer Stats { uint stats[]; };         // [batch, n, 2]: argmax, τ's bits
layout(binding = 5) writeonly buffer Out { int tokens_out[]; };      // [batch, L]
layout(binding = 6) writeonly buffer Emitted { int emitted[]; };     // [batch]
layout(binding = 7) writeonly buffer Len { int accept_len[]; };      // [batch]
layout(binding = 8) writeonly buffer Best { int best_path[]; };      // [batch]
layout(binding = 9) writeonly buffer Nodes { int accepted_nodes[]; };  // [batch, L]

shared int sh_len[T];
shared float sh_score[T];
shared uint sh_path[T];

// Whether (len a, score a, path a) beats b: longer, then higher score, then lower path index.
bool beats(int la, float sa, uint pa, int lb, float sb, uint pb) {
  if (la != lb) return la > lb;
  if (sa != sb) return sa > sb;
  return pa < pb;
}

void main() {
  const uint b = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (b >= uint(pc.p.batch)) return;  // whole workgroups: barriers stay uniform
  const uint lane = gl_LocalInvocationID.x;
  const uint n = uint(pc.p.nodes), V = uint(pc.p.vocab), L = uint(pc.p.max_depth) + 1u;
  const bool typical = pc.p.mode == 1;
  const uint node0 = b * n;
  // A count past n cannot index a retrieve row outside the tree.
  const uint leaves = min(uint(max(n_leaves[b], 0)), n);

  // 1. This lane's paths.
  int best_len = -1;
  float best_score = ACC_NEG_INF;
  uint best = 0xffffffffu;
  for (uint l = lane; l < leaves; l += T) {
    const uint path = (node0 + l) * L;
    int len = 0;
    precise float score = 0.0;
    for (uint t = 1u; t < L; ++t) {
      const int v = retrieve[path + t];
      if (v < 0) break;
      const uint u = uint(retrieve[path + t - 1u]) + node0;
      const int x = tokens[node0 + uint(v)];
      bool ok;
      if (typical) {
        const float px = probs[u * V + uint(x)];
        ok = px > uintBitsToFloat(stats[2u * u + 1u]);
        if (ok) score += accurate_log(px);
      } else {
        ok = uint(x) == stats[2u * u];
      }
      if (!ok) break;
      ++len;
    }
    if (len > best_len || (len == best_len && score > best_score)) {
      best_len = len;
      best_score = score;
      best = l;
    }
  }

  // 2. The workgroup's best.
  sh_len[lane] = best_len;
  sh_score[lane] = best_score;
  sh_path[lane] = best;
  barrier();
  for (uint s = T / 2u; s > 0u; s >>= 1u) {
    if (lane < s && beats(sh_len[lane + s], sh_score[lane + s], sh_path[lane + s], sh_len[lane], sh_score[lane],
                          sh_path[lane])) {
      sh_len[lane] = sh_len[lane + s];
      sh_score[lane] = sh_score[lane + s];
      sh_path[lane] = sh_path[lane + s];
    }
    barrier();
  }
  const int len = sh_len[0];
  const uint chosen = sh_path[0];

  // 3. The outputs. A tree without leaves (never generated) emits nothing.
  const uint path = (node0 + (len >= 0 ? chosen : 0u)) * L;
  for (uint t = lane; t < L; t += T) {
    int node = -1, token = -1;
    if (int(t) <= len) node = retrieve[path + t];
    if (int(t) < len) token = tokens[node0 + uint(retrieve[path + t + 1u])];
    else if (int(t) == len) token = int(stats[2u * (node0 + uint(retrieve[path + t]))]);
    accepted_nodes[b * L + t] = node;
    tokens_out[b * L + t] = token;
  }
  if (lane == 0u) {
    emitted[b] = len + 1;
    accept_len[b] = max(len, 0);
    best_path[b] = len >= 0 ? int(chosen) : 0;
  }
}
