// What the attention shaders share: the push-constant block (attention_plan.h fills it), row
// packing and the causal rule (reference/attention/attention_common.h); 8-element loads come
// from load8.glsl.
//
// Rows: the query rows of one (batch, KV head) are packed as r = i·group + g, so one KV tile
// serves every query head of the group (GQA packing), and rows next to each other share a
// position, which keeps a causal block's key range tight. r -> head kv_head·group + r % group,
// position r / group.
#ifndef ATTNBENCH_ATTENTION_COMMON_GLSL
#define ATTNBENCH_ATTENTION_COMMON_GLSL

#include "dtype.glsl"
#include "load8.glsl"

layout(push_constant) uniform Push {
  uint batch, q_heads, kv_heads, group, q_len, kv_cap;
  uint rows;        // group · q_len: packed query rows per (batch, KV head)
  uint row_blocks;  // workgroups along the packed rows
  uint splits;      // KV splits; > 1 writes partials that attention_merge combines
  uint split_len;   // keys per split
  uint causal;
  uint groups;      // workgroups launched
  float scale;      // (float)(1/sqrt(head_dim)), as the reference's baseline rounds it
} pc;

uint head_of(uint kv_head, uint r) { return kv_head * pc.group + r % pc.group; }
uint pos_of(uint r) { return r / pc.group; }
// Row of O and LSE ([batch, q_heads, q_len] flattened).
uint out_row(uint b, uint h, uint i) { return (b * pc.q_heads + h) * pc.q_len + i; }

// Keys visible to query position i of a sequence with kv_len keys: [0, visible_end).
// Causal masking is bottom-right aligned: query i sees keys j <= kv_len - q_len + i.
uint visible_end(uint kv_len, uint i) {
  if (pc.causal == 0u) return kv_len;
  return uint(clamp(int(kv_len) - int(pc.q_len) + int(i) + 1, 0, int(kv_len)));
}

uint workgroup_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

#endif
