// What the attention shaders share: the push-constant block (attention_plan.h fills it), row
// packing and the causal rule (reference/attention/attention_common.h); 8-element loads come
// from load8.glsl.
//
// Rows: the query rows of one (batch, KV head) are packed as r = i·group + g, so one KV tile
// serves every query head of the group (GQA packing), and rows next to each other share a
// position, which keeps a causal block's key range tight. r -> head kv_head·group + r % group,
// position r / group.
//
// Head-sparse (attention_common.h): attention_row_map compacts each (batch, KV head)'s active
// rows into a row map, and the kernels' workgroups cover only its first row_count positions.
// Gathered keys and key bias (attention_common.h key_index, key_bias): the kernels count list
// positions n as before and reach a position's rows of K, V and key_bias through key_row().
// A tree (attention_common.h tree_mask) hides from each query the tree keys that are not its
// ancestors: tree_sees() looks its bit up inside the causal span.
// Every attention pipeline has the same fifteen bindings (attention_stage.cpp binds one list);
// the three of head_sparse, the two of key_index and key_bias and tree_mask's are declared here,
// read-only except in the pass that writes the row map.
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

// The window and sinks (attention_common.h): a row whose keys end at `end` sees
// [0, sink_end(begin)) ∪ [begin, end), begin = window_begin(end).
uint window_begin(uint end) { return pc.s.window > 0 && end > uint(pc.s.window) ? end - uint(pc.s.window) : 0u; }
uint sink_end(uint begin) { return min(uint(pc.s.sinks), begin); }
bool key_visible(uint n, uint sink, uint begin, uint end) { return n < end && (n >= begin || n < sink); }

// tanh in fp32 to within 5 ulp wherever +, ×, / are correctly rounded: the odd rational
// x·p(x²)/q(x²) of degrees 13 and 6 on x clamped to ±7.9053, where it reaches 1 (the CPU
// kernel's tanh_v; GLSL's own tanh has no precision the spec promises).
float rational_tanh(float x) {
  precise float c = clamp(x, -7.90531110763549805, 7.90531110763549805);
  precise float x2 = c * c;
  precise float p = -2.76076847742355e-16;
  p = p * x2 + 2.00018790482477e-13;
  p = p * x2 - 8.60467152213735e-11;
  p = p * x2 + 5.12229709037114e-08;
  p = p * x2 + 1.48572235717979e-05;
  p = p * x2 + 6.37261928875436e-04;
  p = p * x2 + 4.89352455891786e-03;
  p = p * c;
  precise float q = 1.19825839466702e-06;
  q = q * x2 + 1.18534705686654e-04;
  q = q * x2 + 2.26843463243900e-03;
  q = q * x2 + 4.89352518554385e-03;
  return p / q;
}

// The final logit of a scaled score s for key n (attention_common.h): soft-cap, then ALiBi's
// slope·(n − pos) with pos the query's position. Both off: s unchanged.
float final_logit(float s, uint n, float slope, float pos) {
  if (pc.s.softcap > 0.0) s = pc.s.softcap * rational_tanh(s / pc.s.softcap);
  if (pc.s.alibi != 0) s += slope * (float(n) - pos);
  return s;
}

#ifdef ATTENTION_ROW_MAP_WRITER
#define ATTENTION_ROW_MAP_ACCESS
#else
#define ATTENTION_ROW_MAP_ACCESS readonly
#endif
layout(binding = 9) readonly buffer RowGates { float row_gates[]; };  // [batch, q_heads, q_len]
layout(binding = 10) ATTENTION_ROW_MAP_ACCESS buffer RowMap { int row_map[]; };  // [batch·kv_heads][rows]
layout(binding = 11) ATTENTION_ROW_MAP_ACCESS buffer RowCount { int row_count[]; };  // [batch·kv_heads]

layout(binding = 12) readonly buffer KeyIdx { int key_idx[]; };     // [batch, 1 or kv_heads, kv_cap] with key_index
layout(binding = 13) readonly buffer KeyBias { float key_bias[]; };  // [batch, kv_heads, cache rows] with key_bias

// The row of K, V (at v_stride) and key_bias that position n < kv_len of (sequence b, KV head g)
// reads (attention_common.h key_row): n itself, or with key_index its entry in key_idx. Only for
// positions below the list's length: the entries past it are not keys.
uint key_row(uint b, uint g, uint n) {
  const uint bg = b * uint(pc.s.kv_heads) + g;
  if (pc.s.key_index == 0) return bg * uint(pc.s.kv_cap) + n;
  return bg * uint(pc.s.cache_cap) + uint(key_idx[(pc.s.key_index == 2 ? bg : b) * uint(pc.s.kv_cap) + n]);
}
// A final logit (final_logit) with the bias of its key's row added, after the cap and ALiBi as the
// reference adds it; without key_bias, lg unchanged (not lg + 0: a −0 logit keeps its sign).
float with_key_bias(float lg, uint row) {
  if (pc.s.key_bias == 0) return lg;
  precise float biased = lg + key_bias[row];  // not fused with the scale's product, which the reference rounds first
  return biased;
}
// The same for position n of (sequence b, KV head g), its row looked up only with key_bias.
float with_key_bias(float lg, uint b, uint g, uint n) { return pc.s.key_bias != 0 ? with_key_bias(lg, key_row(b, g, n)) : lg; }

layout(binding = 14) readonly buffer TreeMask { int tree_mask[]; };  // [batch, q_len, words] with tree_mask

// Whether query position i of sequence b sees key n < its visible end of a (sequence, KV head) of
// kvlen keys (attention_common.h tree_visible): always without tree_mask and for a prefix key,
// else the bit of tree key n − (kvlen − q_len) in the query's mask row.
bool tree_sees(uint b, uint i, uint kvlen, uint n) {
  if (pc.s.tree_mask == 0) return true;
  const int t = int(n) - (int(kvlen) - pc.s.q_len);
  if (t < 0) return true;
  const uint words = (uint(pc.s.q_len) + 31u) / 32u;
  return ((uint(tree_mask[(b * uint(pc.s.q_len) + i) * words + uint(t) / 32u]) >> (uint(t) & 31u)) & 1u) != 0u;
}

// Positions of group bh's task rows: its active rows with head_sparse, else every packed row.
uint task_rows(uint bh) { return pc.s.head_sparse != 0 ? uint(row_count[bh]) : pc.plan.rows; }
// The packed row at position p < task_rows(bh) (attention_common.h packed_row).
uint packed_row(uint bh, uint p) { return pc.s.head_sparse != 0 ? uint(row_map[bh * pc.plan.rows + p]) : p; }
// What a finished row's normalised O is multiplied by: its gate with head_sparse, else 1, so a
// gate of 1 leaves the bits of the ungated row.
float row_gate(uint orow) { return pc.s.head_sparse != 0 ? row_gates[orow] : 1.0; }

uint workgroup_index() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

#endif
