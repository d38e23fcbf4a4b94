// Shared definition of rope (catalog A-ROPE): rotary position embedding applied to the queries and
// keys of one layer, standalone (the attention kernels take rotated inputs).
//
// Inputs (canonical layouts):
//   q          [batch, q_heads, tokens, head_dim]   case dtype
//   k          [batch, kv_heads, tokens, head_dim]  case dtype
//   positions  [batch, tokens] i32                  each token's position (a cached key keeps its own)
//   inv_freq   [rotary_dim / 2] f32                 θ_f after the scaling (rope.cpp), as HF's
//                                                    rotary embedding holds it
// Outputs q_rot, k_rot: the same shapes and dtype. For each token at position p and pair f of the
// first rotary_dim dims, with a = fl32(p·θ_f) (the angle in fp32, as HF and vLLM form it):
//   half (NeoX, HF's rotate_half):  (x_f, x_{f+r/2})  ->  c·(x_f cos a − x_{f+r/2} sin a,
//                                                          x_{f+r/2} cos a + x_f sin a)
//   interleaved (GPT-J):            (x_{2f}, x_{2f+1}) -> the same rotation
// with c = attention_factor (YaRN's mscale; 1 otherwise); dims past rotary_dim pass unchanged.
//
// Light on purpose: CUDA device code and the Vulkan shader read the field list.
#ifndef ATTNBENCH_ROPE_COMMON_H
#define ATTNBENCH_ROPE_COMMON_H

#define ATTNBENCH_ROPE_FIELDS(X)                                             \
  X(i32, batch)                                                              \
  X(i32, q_heads)                                                            \
  X(i32, kv_heads)                                                           \
  X(i32, head_dim)                                                           \
  X(i32, tokens)                                                             \
  X(i32, rotary_dim)       /* even, ≤ head_dim; 0 rotates nothing */         \
  X(i32, interleaved)      /* 1: GPT-J pairs (2f, 2f+1); 0: NeoX halves */   \
  X(f32, attention_factor) /* YaRN's mscale on the rotated dims; else 1 */

#ifdef __cplusplus
#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::rope {

ATTNBENCH_PARAM_STRUCT(RopeParams, ATTNBENCH_ROPE_FIELDS);

RopeParams rope_params(const Case& c);

// The partner of dim x within the rotated pairs, and the sign its sine takes:
// out[x] = c·(in[x]·cos a_f + sign·in[partner]·sin a_f), f = pair_of(x).
ATTNBENCH_HD inline int pair_of(const RopeParams& s, int x) { return s.interleaved ? x / 2 : x % (s.rotary_dim / 2); }
ATTNBENCH_HD inline int partner_of(const RopeParams& s, int x) {
  const int h = s.rotary_dim / 2;
  return s.interleaved ? (x ^ 1) : (x < h ? x + h : x - h);
}
ATTNBENCH_HD inline float sine_sign(const RopeParams& s, int x) {
  return s.interleaved ? ((x & 1) ? 1.0f : -1.0f) : (x < s.rotary_dim / 2 ? -1.0f : 1.0f);
}

}  // namespace attnbench::rope
#endif  // __cplusplus
#endif
