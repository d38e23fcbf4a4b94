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
#include "param_struct.glsl"
#include "reference/attention/attention_common.h"
#include "attention/attention_plan.h"

ATTNBENCH_PARAM_STRUCT(AttentionParams, ATTNBENCH_ATTENTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(AttentionPlan, ATTNBENCH_VK_ATTENTION_PLAN)

layout(push_constant) uniform Push {
  AttentionParams s;  // the method's (scale: (float)(1/sqrt(head_dim)), as the baseline rounds it)
  AttentionPlan plan;
} pc;

uint head_of(uint kv_head, uint r) { return kv_head * uint(pc.s.group) + r % uint(pc.s.group); }
uint pos_of(uint r) { return r / uint(pc.s.group); }
// Row of O and LSE ([batch, q_heads, q_len] flattened).
uint out_row(uint b, uint h, uint i) { return (b * uint(pc.s.q_heads) + h) * uint(pc.s.q_len) + i; }
// The element of kv_len holding the length of (sequence b, KV head g).
uint kv_len_index(uint b, uint g) { return pc.s.head_lengths != 0 ? b * uint(pc.s.kv_heads) + g : b; }

// Keys visible to query position i of a (sequence, KV head) with kv_len keys: [0, visible_end).
// Causal masking is bottom-right aligned: query i sees keys j <= kv_len - q_len + i.
uint visible_end(uint kv_len, uint i) {
  if (pc.s.causal == 0) return kv_len;
  return uint(clamp(int(kv_len) - pc.s.q_len + int(i) + 1, 0, int(kv_len)));
}

uint workgroup_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

#endif
