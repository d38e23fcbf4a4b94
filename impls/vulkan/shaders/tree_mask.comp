#version 450
// tree_mask (reference/decoding/tree_mask.cpp): one workgroup per tree, in one dispatch of three
// stages separated by workgroup barriers.
//   0. The tree's parents go to shared memory (every ancestor walk below reads them, a chain of
//      dependent loads that would otherwise go to global memory), the child bitset is zeroed.
//   1. Lane k takes nodes i = k, k + T, ... and walks i's ancestor chain once, from i up. Indices
//      fall strictly along the chain, so the row's words come out in descending order: one loop
//      of W + depth + 1 iterations either adds an ancestor's bit to the current word or writes the
//      word (zero where no ancestor falls) and moves down one. Every word is written exactly
//      once, no read-modify-write. The walk's length is the depth (depth, position_ids); the
//      node marks its parent in a shared bitset of "has a child" (atomicOr: siblings share words).
//   2. Leaves are the bitset's zeros below n. An exclusive scan of the leaf words' popcounts (W
//      values, in chunks of T lanes, Hillis-Steele in shared memory) gives each word the leaves
//      before it; a leaf's retrieve row is that plus the leaves below it in its word, so the
//      order is ascending node index. The total is n_leaves.
//   3. Each leaf's lane (the lane of stage 1, which reads back the depth it wrote) writes its row
//      from column L-1 down: -1 past its depth, then the path from the leaf up to the root at
//      column 0, one loop of L iterations. All lanes then fill rows n_leaves..n-1 with -1, lanes
//      over consecutive elements.
// No subgroup operation is used, so lanes are gl_LocalInvocationID.x and any subgroup size works.
// Loop lengths per invocation are bounded by the host's plan (tree_mask_vulkan.cpp), which keeps
// them under lavapipe's loop limiter. A parent that is not below its child ends the walk, so a
// malformed tree cannot hang the device or write outside its rows.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint NCAP = 32u;  // nodes the shared arrays hold, a multiple of 32

const uint T = gl_WorkGroupSize.x;

#include "param_struct.glsl"
#include "reference/decoding/tree_common.h"

ATTNBENCH_PARAM_STRUCT(TreeParams, ATTNBENCH_TREE_FIELDS)

layout(push_constant) uniform Push {
  TreeParams p;
} pc;

layout(binding = 0) readonly buffer Parents { int parents[]; };      // [batch, n]
layout(binding = 1) writeonly buffer Mask { uint mask[]; };          // [batch, n, W]
layout(binding = 2) buffer Depth { int depth[]; };                    // [batch, n]; stage 3 reads its own writes
layout(binding = 3) writeonly buffer Pos { int position_ids[]; };    // [batch, n]
layout(binding = 4) writeonly buffer Leaves { int n_leaves[]; };     // [batch]
layout(binding = 5) writeonly buffer Retrieve { int retrieve[]; };   // [batch, n, L]

shared int sh_parent[NCAP];
shared uint sh_child[NCAP / 32u];   // bit i: node i has a child
shared uint sh_before[NCAP / 32u];  // leaves in the words before this one
shared uint sh_scan[T];

// The next node up from j (j >= 0), or -1 at the root; -1 too for a parent not below j.
int up(int j) {
  const int q = sh_parent[j];
  return q < j ? q : -1;
}

// Bits of the nodes < n without a child in word w.
uint leaf_word(uint w, uint n) {
  const uint valid = n >= 32u * (w + 1u) ? 0xffffffffu : (1u << (n - 32u * w)) - 1u;
  return ~sh_child[w] & valid;
}

void main() {
  const uint b = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (b >= uint(pc.p.batch)) return;  // whole workgroups, so the barriers below stay uniform
  const uint lane = gl_LocalInvocationID.x;
  const uint n = uint(pc.p.nodes), W = uint(pc.p.mask_words), L = uint(pc.p.max_depth) + 1u;
  const uint node0 = b * n;

  // 0. Parents in, child bits cleared.
  for (uint i = lane; i < n; i += T) sh_parent[i] = parents[node0 + i];
  for (uint w = lane; w < W; w += T) sh_child[w] = 0u;
  barrier();

  // 1. Mask rows, depths, position ids; parents marked.
  for (uint i = lane; i < n; i += T) {
    const uint row = (node0 + i) * W;
    int j = int(i);
    uint w = W - 1u, bits = 0u, count = 0u;
    while (true) {
      if (j >= 0 && uint(j) >> 5 == w) {
        bits |= 1u << (uint(j) & 31u);
        ++count;
        j = up(j);
      } else {
        mask[row + w] = bits;
        if (w == 0u) break;
        bits = 0u;
        --w;
      }
    }
    depth[node0 + i] = int(count) - 1;
    position_ids[node0 + i] = pc.p.prefix + int(count) - 1;
    const int q = up(int(i));
    // Workgroup scope: the bitset is shared memory (the default Device scope needs a feature
    // lavapipe lacks).
    if (q >= 0) atomicOr(sh_child[uint(q) >> 5], 1u << (uint(q) & 31u), gl_ScopeWorkgroup, 0, 0);
  }
  barrier();

  // 2. Exclusive scan of the leaf words' popcounts, T words a chunk (W <= T but for trees over
  // 32·T nodes).
  uint carry = 0u;
  for (uint base = 0u; base < W; base += T) {
    const uint span = min(T, W - base), w = base + lane;
    const uint v = w < W ? bitCount(leaf_word(w, n)) : 0u;
    sh_scan[lane] = v;
    barrier();
    for (uint off = 1u; off < span; off <<= 1u) {
      const uint add = lane >= off ? sh_scan[lane - off] : 0u;
      barrier();
      sh_scan[lane] += add;
      barrier();
    }
    if (w < W) sh_before[w] = carry + sh_scan[lane] - v;
    carry += sh_scan[span - 1u];
    barrier();  // sh_scan is rewritten by the next chunk; sh_before is read below
  }
  const uint leaves = carry;
  if (lane == 0u) n_leaves[b] = int(leaves);

  // 3. Each leaf's path, root first, -1 after it.
  const uint ret0 = node0 * L;
  for (uint i = lane; i < n; i += T) {
    const uint word = leaf_word(i >> 5, n), bit = 1u << (i & 31u);
    if ((word & bit) == 0u) continue;
    const uint l = sh_before[i >> 5] + bitCount(word & (bit - 1u));
    const uint row = ret0 + l * L;
    const int d = depth[node0 + i];
    int j = int(i);
    for (uint t = L; t-- > 0u;) {
      int v = -1;
      if (int(t) <= d && j >= 0) {
        v = j;
        j = up(j);
      }
      retrieve[row + t] = v;
    }
  }
  // Rows past the leaves.
  for (uint e = leaves * L + lane; e < n * L; e += T) retrieve[ret0 + e] = -1;
}
