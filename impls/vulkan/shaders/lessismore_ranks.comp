#version 450
// lessismore's ranks and scores (reference/kvcomp/lessismore.cpp; the steps and the bitonic passes:
// lessismore_common.h), after each query head's top k (kv_select over the logits, indices
// ascending). One shader, three pipelines by MODE:
//   0  a local pass: a workgroup per (head, tile of pc.pass.tile ≤ TILE elements) sorts its
//      (logit, index) pairs in shared memory through the pass's merge sizes and strides; from the
//      heads' top k and logits (load) or the workspace, to the workspace or, when the sort is
//      complete (emit), as each real element's rank into its head's row of ranks
//   1  a global step: an invocation per compare-exchange of every head's segment, in the workspace
//   2  the scores: an invocation per candidate of each sequence, key = the min over its heads h of
//      rank·q_heads + h in head order; −key, or −(k + 1)·q_heads where no head ranks it
// The tie rule orders the pairs: larger logit first, then smaller index; pads (−inf, kLessismorePad)
// come last.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0u;
layout(constant_id = 2) const uint TILE = 1u;  // MODE 0: the shared tile (a power of two ≥ pc.pass.tile)

#include "dtype.glsl"
#include "param_struct.glsl"
#include "reference/kvcomp/lessismore_common.h"

ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(LessismorePass, ATTNBENCH_LESSISMORE_PASS_FIELDS)

const uint NT = gl_WorkGroupSize.x;
const int PAD = 0x7fffffff;  // kLessismorePad
const uint NONE = 0xffffffffu;  // no rank: the candidate is not among the head's top k

layout(binding = 0) readonly buffer Logits { float logits[]; };  // [batch·q_heads, candidates]
layout(binding = 1) readonly buffer Top { int top[]; };          // [batch·q_heads, top_k]
layout(binding = 2) buffer SortKey { float sort_key[]; };        // [batch·q_heads, width] (width > tile)
layout(binding = 3) buffer SortIdx { int sort_idx[]; };
layout(binding = 4) buffer Ranks { uint ranks[]; };              // [batch·q_heads, candidates]
layout(binding = 5) writeonly buffer Scores { float scores[]; }; // [batch, candidates]

layout(push_constant) uniform Push {
  SelectionParams sel;
  LessismorePass pass;
} pc;

shared float skey[TILE];
shared int sidx[TILE];

bool better(float ka, int ia, float kb, int ib) { return ka > kb || (ka == kb && ia < ib); }

// The lower element of compare-exchange pair q at `stride` (pairs e, e + stride, e & stride == 0).
uint pair_low(uint q, uint stride) { return 2u * q - (q & (stride - 1u)); }

void local_pass(uint wg, uint tid) {
  const uint tile = pc.pass.tile, width = pc.pass.width, tiles = width / tile;
  const uint H = uint(pc.sel.q_heads), k = uint(pc.sel.top_k), C = uint(pc.sel.candidates);
  if (wg >= uint(pc.sel.batch) * H * tiles) return;
  const uint row = wg / tiles, base = wg % tiles * tile, seg = row * width;  // row = b·q_heads + h
  for (uint e = tid; e < tile; e += NT) {
    const uint i = base + e;
    float v = NEG_INF;
    int j = PAD;
    if (pc.pass.load == 0u) {
      v = sort_key[seg + i];
      j = sort_idx[seg + i];
    } else if (i < k) {
      j = top[row * k + i];
      v = logits[row * C + uint(j)];
    }
    skey[e] = v;
    sidx[e] = j;
  }
  barrier();
  for (uint size = pc.pass.size_lo; size <= pc.pass.size_hi; size *= 2u)
    for (uint stride = size == pc.pass.size_lo ? pc.pass.stride : size / 2u; stride > 0u; stride /= 2u) {
      for (uint q = tid; q < tile / 2u; q += NT) {
        const uint e = pair_low(q, stride), f = e + stride;
        if (better(skey[f], sidx[f], skey[e], sidx[e]) == (((base + e) & size) == 0u)) {
          const float t = skey[e];
          skey[e] = skey[f];
          skey[f] = t;
          const int u = sidx[e];
          sidx[e] = sidx[f];
          sidx[f] = u;
        }
      }
      barrier();
    }
  for (uint e = tid; e < tile; e += NT) {
    if (pc.pass.emit == 0u) {
      sort_key[seg + base + e] = skey[e];
      sort_idx[seg + base + e] = sidx[e];
    } else if (sidx[e] != PAD) {  // position base + e is the head's rank of the token
      ranks[row * C + uint(sidx[e])] = base + e;
    }
  }
}

void global_step(uint t) {
  const uint half_width = pc.pass.width / 2u;
  if (t >= uint(pc.sel.batch * pc.sel.q_heads) * half_width) return;
  const uint seg = t / half_width * pc.pass.width, e = seg + pair_low(t % half_width, pc.pass.stride), f = e + pc.pass.stride;
  const bool up = ((e - seg) & pc.pass.size_lo) == 0u;
  if (better(sort_key[f], sort_idx[f], sort_key[e], sort_idx[e]) == up) {
    const float v = sort_key[e];
    sort_key[e] = sort_key[f];
    sort_key[f] = v;
    const int u = sort_idx[e];
    sort_idx[e] = sort_idx[f];
    sort_idx[f] = u;
  }
}

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x, tid = gl_LocalInvocationIndex;
  if (MODE == 0u) {
    local_pass(wg, tid);
  } else if (MODE == 1u) {
    global_step(wg * NT + tid);
  } else {
    const uint t = wg * NT + tid, H = uint(pc.sel.q_heads), C = uint(pc.sel.candidates);
    if (t >= uint(pc.sel.batch) * C) return;
    const uint first = (t / C * H) * C + t % C;  // head 0 of sequence t / C, candidate t % C
    uint key = NONE;
    for (uint h = 0u; h < H; ++h) {
      const uint r = ranks[first + h * C];
      if (r != NONE) key = min(key, r * H + h);
    }
    scores[t] = key == NONE ? -float((pc.sel.top_k + 1) * pc.sel.q_heads) : -float(key);
  }
}
