#version 450
// eagle2_tree, stage 2 (reference/decoding/eagle2_tree.cpp): one workgroup per tree builds it from
// its rows' top k (stage 1's scratch: candidate c's token and ℓ are entry c of the tree's [slots, k]
// block, since row 1 + (l − 2)·k + s holds the children of level l − 1's slot s).
//   frontiers  level by level in shared memory. A slot's children are already in order (ℓ falls
//              with the rank, the score min(P, P + ℓ) with it, ties to the lower rank), so a
//              candidate's rank in its level is its own rank plus, in each other slot's list, the
//              children that beat it (a binary search: those ≥ it in an earlier slot, > it in a
//              later one); the k of rank < k are the frontier, slot = rank.
//   selection  the best n − 1 of the C candidates by eagle2_radix.glsl, scores recomputed from
//              the frontiers on each read; the kept set as a bitset over candidate indices, whose
//              popcount scan gives each kept candidate its node (creation order) and its parent's.
// Nodes are written by their candidates' lanes; node 0 is the root.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require

layout(local_size_x_id = 0) in;

const uint T = gl_WorkGroupSize.x;  // a power of two ≤ 1024 (the host's plan)
const uint KMAX = 32u, DMAX = 16u, WORDS = 481u;  // the schema's largest top_k, depth, C/32

#include "param_struct.glsl"
#include "reference/decoding/eagle2_common.h"

ATTNBENCH_PARAM_STRUCT(Eagle2Params, ATTNBENCH_EAGLE2_FIELDS)

layout(push_constant) uniform Push {
  Eagle2Params p;
} pc;

layout(binding = 0) readonly buffer Top { uint top[]; };  // [batch, slots, k, 2]: token, ℓ's bits
layout(binding = 1) readonly buffer Root { int root_token[]; };
layout(binding = 2) writeonly buffer Tokens { int tokens[]; };   // [batch, n]
layout(binding = 3) writeonly buffer Parents { int parents[]; };  // [batch, n]

shared float fr_score[DMAX * KMAX];  // level l's frontier (l = 1 .. D − 1) at (l − 1)·k + slot
shared uint fr_cand[DMAX * KMAX];
shared float sh_sc[KMAX * KMAX];     // the level being ranked
shared uint sh_bits[WORDS];          // kept candidates
shared uint sh_before[WORDS];        // kept candidates in the words before

uint tree_base = 0u;  // the tree's first scratch entry

float ell_of(uint c) { return uintBitsToFloat(top[(tree_base + c) * 2u + 1u]); }

uint level_of(uint c, uint k) { return c < k ? 1u : 2u + (c - k) / (k * k); }

// Candidate c's score: ℓ at level 1, else min(P, P + ℓ) with P its slot's (the frontier above).
float score_of(uint c, uint k) {
  const uint level = level_of(c, k);
  if (level == 1u) return min(0.0, ell_of(c));
  const uint s = ((c - k) % (k * k)) / k;
  const float P = fr_score[(level - 2u) * k + s];
  precise const float sum = P + ell_of(c);
  return min(P, sum);
}

void e2_key(uint i, out uint hi, out uint lo);
#include "eagle2_radix.glsl"

void e2_key(uint i, out uint hi, out uint lo) {
  hi = e2_order(score_of(i, uint(pc.p.top_k)));
  lo = 0xfffffu - i;
}

// How many of list s (k scores, non-increasing) beat score v: those ≥ v (or > v when strict).
uint beaten_by(uint s, uint k, float v, bool strict) {
  uint lo = 0u, hi = k;  // the first position that does not beat v
  while (lo < hi) {
    const uint mid = (lo + hi) / 2u;
    const float x = sh_sc[s * k + mid];
    if (strict ? x > v : x >= v) lo = mid + 1u;
    else hi = mid;
  }
  return lo;
}

uint node_of(uint c) {
  const uint w = c >> 5;
  return 1u + sh_before[w] + bitCount(sh_bits[w] & ((1u << (c & 31u)) - 1u));
}

void main() {
  const uint b = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (b >= uint(pc.p.batch)) return;  // whole workgroups: barriers stay uniform
  const uint lane = gl_LocalInvocationID.x;
  const uint k = uint(pc.p.top_k), D = uint(pc.p.depth), C = uint(pc.p.candidates), n = uint(pc.p.nodes);
  tree_base = b * C;

  // Frontier of level 1: the root's children, in order already.
  for (uint s = lane; s < k; s += T) {
    fr_cand[s] = s;
    fr_score[s] = min(0.0, ell_of(s));
  }
  barrier();
  for (uint level = 2u; level < D; ++level) {
    const uint start = k + (level - 2u) * k * k;
    for (uint i = lane; i < k * k; i += T) sh_sc[i] = score_of(start + i, k);
    barrier();
    for (uint i = lane; i < k * k; i += T) {
      const uint s = i / k, r = i % k;
      const float v = sh_sc[i];
      uint rank = r;
      for (uint o = 0u; o < k && rank < k; ++o)
        if (o != s) rank += beaten_by(o, k, v, o > s);
      if (rank < k) {
        fr_cand[(level - 1u) * k + rank] = start + i;
        fr_score[(level - 1u) * k + rank] = v;
      }
    }
    barrier();
  }

  // The selection, as a bitset over the candidates.
  const uint words = (C + 31u) / 32u;
  for (uint w = lane; w < words; w += T) sh_bits[w] = 0u;
  const uvec4 t = e2_select(C, n - 1u, 0u);  // its first barrier orders the clearing
  for (uint i = lane; i < C; i += T) {
    uint hi, lo;
    e2_key(i, hi, lo);
    if (e2_selected(t, hi, lo)) atomicOr(sh_bits[i >> 5], 1u << (i & 31u), gl_ScopeWorkgroup, 0, 0);
  }
  barrier();
  // Exclusive popcount scan over the words: each lane a run of them, a scan over the runs.
  const uint per = (words + T - 1u) / T, w0 = min(lane * per, words), w1 = min(w0 + per, words);
  uint own = 0u;
  for (uint w = w0; w < w1; ++w) own += bitCount(sh_bits[w]);
  e2_csum[lane] = own;
  barrier();
  for (uint off = 1u; off < T; off <<= 1u) {
    const uint add = lane >= off ? e2_csum[lane - off] : 0u;
    barrier();
    e2_csum[lane] += add;
    barrier();
  }
  uint before = e2_csum[lane] - own;
  for (uint w = w0; w < w1; ++w) {
    sh_before[w] = before;
    before += bitCount(sh_bits[w]);
  }
  barrier();

  const uint row = b * n;
  if (lane == 0u) {
    tokens[row] = root_token[b];
    parents[row] = -1;
  }
  for (uint c = lane; c < C; c += T) {
    if ((sh_bits[c >> 5] & (1u << (c & 31u))) == 0u) continue;
    const uint node = node_of(c), level = level_of(c, k);
    int parent = 0;
    if (level > 1u) parent = int(node_of(fr_cand[(level - 2u) * k + ((c - k) % (k * k)) / k]));
    tokens[row + node] = int(top[(tree_base + c) * 2u]);
    parents[row + node] = parent;
  }
}
