// What the attention shaders share: the push-constant block (attention_plan.h fills it), row
// packing and the causal rule (reference/attention/attention_common.h), and 8-element loads.
//
// Rows: the query rows of one (batch, KV head) are packed as r = i·group + g, so one KV tile
// serves every query head of the group (GQA packing), and rows next to each other share a
// position, which keeps a causal block's key range tight. r -> head kv_head·group + r % group,
// position r / group.
#ifndef ATTNBENCH_ATTENTION_COMMON_GLSL
#define ATTNBENCH_ATTENTION_COMMON_GLSL

#include "dtype.glsl"

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

// Defines `void NAME(uint e, uint n, out vec4 lo, out vec4 hi)`: elements e .. e+7 of the tensor
// bound as V4 (uvec4 view), V2 (16-bit view) and V1 (32-bit view), as floats; elements at index
// n and beyond are 0 (the row's end). With VEC the row starts on a 16-byte boundary and e is a
// multiple of 8, so whole chunks are one or two 16-byte loads.
#define DEFINE_LOAD8(NAME, V4, V2, V1)                                                   \
  void NAME(uint e, uint n, out vec4 lo, out vec4 hi) {                                 \
    if (VEC && n >= 8u) {                                                               \
      if (DTYPE == DT_F32) {                                                            \
        lo = uintBitsToFloat(V4[e >> 2]);                                               \
        hi = uintBitsToFloat(V4[(e >> 2) + 1u]);                                        \
      } else {                                                                          \
        const uvec4 w = V4[e >> 3];                                                     \
        lo = vec4(unpack2(w.x, DTYPE), unpack2(w.y, DTYPE));                            \
        hi = vec4(unpack2(w.z, DTYPE), unpack2(w.w, DTYPE));                            \
      }                                                                                 \
    } else {                                                                            \
      float x[8];                                                                       \
      for (uint j = 0u; j < 8u; ++j) {                                                  \
        x[j] = 0.0;                                                                     \
        if (j < n) {                                                                    \
          if (DTYPE == DT_F32) x[j] = uintBitsToFloat(V1[e + j]);                       \
          else if (DTYPE == DT_F16) x[j] = f16_bits_to_f32(uint(V2[e + j]));            \
          else x[j] = bf16_bits_to_f32(uint(V2[e + j]));                                \
        }                                                                               \
      }                                                                                 \
      lo = vec4(x[0], x[1], x[2], x[3]);                                                \
      hi = vec4(x[4], x[5], x[6], x[7]);                                                \
    }                                                                                   \
  }

// Declares a read-only input tensor at BINDING under three views.
#define DECLARE_INPUT(BINDING, V4, V2, V1)                                                       \
  layout(binding = BINDING) readonly buffer V4##_block { uvec4 V4[]; };                          \
  layout(binding = BINDING) readonly buffer V2##_block { uint16_t V2[]; };                       \
  layout(binding = BINDING) readonly buffer V1##_block { uint V1[]; };

#endif
