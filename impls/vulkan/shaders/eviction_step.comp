#version 450
// The per-step eviction's scores and eviction (reference/kvcomp/eviction_step_common.h), after the
// backend's gqa decode has written the step's output and each head's log-sum-exp.
//   MODE 0  scores: LANES consecutive invocations share a (score row, slot) item; per KV head of
//           the row each widens its 8-element chunks of the slot's key once and dots them with
//           the queries of up to HC heads of that KV head into shared partials; the item's first
//           lane adds them in lane order (so no bit depends on scheduling), takes
//           exp(logit − lse_h), and after the row's heads writes score (acc + the heads' mean)
//           to every cache row of the score row, and the eviction key (+inf: never evicted).
//   MODE 1  eviction: one workgroup per score row; each invocation keeps the first-to-evict of
//           its strided slots, a tree reduction the row's (positions are distinct in a row, so
//           the order of the reduction cannot change the answer).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint D = 128u;     // head_dim
layout(constant_id = 3) const uint LANES = 16u;  // invocations per item: a power of two dividing NT
layout(constant_id = 4) const bool VEC = true;   // D·sizeof(dtype) is a multiple of 16
layout(constant_id = 5) const uint MODE = 0u;

#include "load8.glsl"
#include "param_struct.glsl"
#include "reference/kvcomp/eviction_step_common.h"

ATTNBENCH_PARAM_STRUCT(StepParams, ATTNBENCH_STEP_FIELDS)

const uint NT = gl_WorkGroupSize.x, ITEMS = NT / LANES, HC = 8u;

DECLARE_INPUT(0, q4, q2, q1)  // q [batch·q_heads, D]
DECLARE_INPUT(1, k4, k2, k1)  // k [batch·kv_heads, slots, D]
layout(binding = 2) readonly buffer Lse { float lse[]; };         // [batch·q_heads]
layout(binding = 3) readonly buffer Pos { int pos[]; };           // [batch·kv_heads, slots]
layout(binding = 4) readonly buffer Acc { float acc[]; };         // [batch·kv_heads, slots − 1]
layout(binding = 5) writeonly buffer Scores { float scores[]; };  // [batch·kv_heads, slots]
layout(binding = 6) buffer Keys { float keys[]; };                // [score rows, slots]
layout(binding = 7) writeonly buffer Evicted { int evicted[]; };  // [batch·kv_heads]

layout(push_constant) uniform Push {
  StepParams s;
  uint groups;
} pc;

DEFINE_LOAD8(load_q, q4, q2, q1)
DEFINE_LOAD8(load_k, k4, k2, k1)

shared float partial[HC * NT];
shared float best_key[NT];
shared int best_pos[NT];
shared uint best_slot[NT];

bool heads_per_row_shared() { return pc.s.shared_scores != 0; }

void scores_pass(uint wg) {
  const uint tid = gl_LocalInvocationIndex, lane = tid % LANES;
  const uint n = uint(pc.s.slots), group = uint(pc.s.group);
  const uint rows = heads_per_row_shared() ? uint(pc.s.batch) : uint(pc.s.batch * pc.s.kv_heads);
  const uint item = wg * ITEMS + tid / LANES;  // row·slots + slot
  const bool live = item < rows * n;
  const uint row = live ? item / n : 0u, i = live ? item % n : 0u;
  const uint src = heads_per_row_shared() ? row * uint(pc.s.kv_heads) : row;  // its first cache row
  const uint b = src / uint(pc.s.kv_heads);
  const uint kv_count = heads_per_row_shared() ? uint(pc.s.kv_heads) : 1u;
  float a = 0.0;
  for (uint gi = 0u; gi < kv_count; ++gi) {
    const uint cr = src + gi, g = cr % uint(pc.s.kv_heads);
    vec4 klo[8], khi[8];  // the lane's chunks of the key (D ≤ 512: at most 8 per lane when LANES ≥ 8)
    uint c = 0u;
    for (uint x = lane * 8u; x < D; x += LANES * 8u, ++c) load_k((cr * n + i) * D + x, D - x, klo[c], khi[c]);
    for (uint h0 = 0u; h0 < group; h0 += HC) {
      const uint hn = min(HC, group - h0);
      for (uint hh = 0u; hh < hn; ++hh) {
        const uint bh = b * uint(pc.s.q_heads) + g * group + h0 + hh;
        float dotp = 0.0;
        c = 0u;
        for (uint x = lane * 8u; x < D; x += LANES * 8u, ++c) {
          vec4 qlo, qhi;
          load_q(bh * D + x, D - x, qlo, qhi);
          dotp += dot(qlo, klo[c]) + dot(qhi, khi[c]);
        }
        partial[hh * NT + tid] = dotp;
      }
      barrier();
      if (live && lane == 0u)
        for (uint hh = 0u; hh < hn; ++hh) {
          float logit = 0.0;
          for (uint l = 0u; l < LANES; ++l) logit += partial[hh * NT + tid + l];
          a += exp(logit * pc.s.scale - lse[b * uint(pc.s.q_heads) + g * group + h0 + hh]);
        }
      barrier();
    }
  }
  if (!live || lane != 0u) return;
  a /= float(heads_per_row_shared() ? pc.s.q_heads : pc.s.group);
  const float score = (pc.s.accumulate != 0 && i < n - 1u ? acc[src * (n - 1u) + i] : 0.0) + a;
  const int p = pos[src * n + i];
  const float key = pc.s.visible_mean != 0 ? score / float(pc.s.kv_len - p) : score;
  keys[row * n + i] = p < pc.s.kv_len - pc.s.recent ? key : uintBitsToFloat(0x7f800000u);
  for (uint gi = 0u; gi < kv_count; ++gi) scores[(src + gi) * n + i] = score;
}

bool evicts_first(float ka, int pa, float kb, int pb) { return ka < kb || (ka == kb && pa > pb); }

void evict_pass(uint row) {
  const uint tid = gl_LocalInvocationIndex, n = uint(pc.s.slots);
  const uint src = heads_per_row_shared() ? row * uint(pc.s.kv_heads) : row;
  float bk = uintBitsToFloat(0x7f800000u);
  int bp = -1;
  uint bs = n;
  for (uint i = tid; i < n; i += NT) {
    const float k = keys[row * n + i];
    const int p = pos[src * n + i];
    if (bs == n || evicts_first(k, p, bk, bp)) { bk = k; bp = p; bs = i; }
  }
  best_key[tid] = bk;
  best_pos[tid] = bp;
  best_slot[tid] = bs;
  barrier();
  for (uint half_n = NT / 2u; half_n > 0u; half_n /= 2u) {
    if (tid < half_n && best_slot[tid + half_n] != n &&
        (best_slot[tid] == n || evicts_first(best_key[tid + half_n], best_pos[tid + half_n], best_key[tid], best_pos[tid]))) {
      best_key[tid] = best_key[tid + half_n];
      best_pos[tid] = best_pos[tid + half_n];
      best_slot[tid] = best_slot[tid + half_n];
    }
    barrier();
  }
  const uint kv_count = heads_per_row_shared() ? uint(pc.s.kv_heads) : 1u;
  for (uint t = tid; t < kv_count; t += NT) evicted[src + t] = int(best_slot[0]);
}

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.groups) return;
  if (MODE == 0u) scores_pass(wg);
  else evict_pass(wg);
}
