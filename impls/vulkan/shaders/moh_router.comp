#version 450
// moh's router (reference/attention/moh_common.h; the selection and gates of moh_router.h, in
// fp32): one workgroup per token t = b·q_len + i, which writes the token's gates and heads_idx.
//   scores   norm: ‖q_h‖₂ of each routed head, LANES threads per head, each summing the squares
//            of its 8-element chunks, the head's first lane adding the lanes' sums in lane order;
//            learned: the token's logits (the projection stage's f32 output)
//   kept     every shared head, and a routed head when fewer than routed_k routed heads score
//            higher or score the same at a lower index
//   gates    norm: 1 for a kept head; learned: the balance α, then the shared heads' softmax and
//            the kept routed heads' renormalised softmax, their maxima and sums reduced over the
//            workgroup by a fixed tree in shared memory
// Every reduction has a fixed order, so the outputs do not depend on scheduling or on the
// subgroup size (no subgroup operation is used).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;                  // a power of two
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint D = 128u;     // head_dim
layout(constant_id = 3) const uint LANES = 16u;  // threads per head's norm: a power of two dividing NT
layout(constant_id = 4) const bool VEC = true;   // D·sizeof(dtype) is a multiple of 16
layout(constant_id = 5) const uint HEADS = 32u;  // q_heads, the size of the shared arrays

#include "accurate_math.glsl"
#include "load8.glsl"
#include "param_struct.glsl"
#include "reference/attention/moh_common.h"

ATTNBENCH_PARAM_STRUCT(RouterParams, ATTNBENCH_ROUTER_FIELDS)

layout(push_constant) uniform Push {
  RouterParams r;
} pc;

const uint NT = gl_WorkGroupSize.x;

DECLARE_INPUT(0, q4, q2, q1)                                          // q [batch, heads, q_len, D]: norm
layout(binding = 1) readonly buffer Logits { float logits[]; };       // [batch·q_len][logit_row]: learned
layout(binding = 2) writeonly buffer Gates { float gates[]; };        // [batch, heads, q_len]
layout(binding = 3) writeonly buffer HeadsIdx { int heads_idx[]; };  // [batch·q_len][shared + routed_k]

DEFINE_LOAD8(load_q, q4, q2, q1)

shared float sh_score[HEADS + 2u];  // the routed heads' scores; learned: every logit of the token
shared uint sh_kept[HEADS];
shared float sh_weight[HEADS];      // learned: exp(ℓ_h − max) of a kept head, else 0
shared float sh_lane[NT];           // the norms' per-lane sums
shared vec2 sh_tree[NT];

// The workgroup's maximum (take_max) or sum of one (shared, routed) pair per thread, on every
// thread: a fixed tree over shared memory.
vec2 workgroup_reduce(vec2 v, bool take_max) {
  const uint tid = gl_LocalInvocationIndex;
  sh_tree[tid] = v;
  barrier();
  for (uint w = NT / 2u; w > 0u; w >>= 1u) {
    if (tid < w) sh_tree[tid] = take_max ? max(sh_tree[tid], sh_tree[tid + w]) : sh_tree[tid] + sh_tree[tid + w];
    barrier();
  }
  const vec2 result = sh_tree[0];
  barrier();  // every thread has read the root before the next reduction overwrites it
  return result;
}

void main() {
  const uint t = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint L = uint(pc.r.q_len);
  if (t >= uint(pc.r.batch) * L) return;
  const uint tid = gl_LocalInvocationIndex, b = t / L, i = t % L;
  const uint H = uint(pc.r.heads), hs = uint(pc.r.shared_heads), k = uint(pc.r.routed_k);
  const bool learned = pc.r.learned != 0;

  if (learned) {
    for (uint h = tid; h < H + 2u; h += NT) sh_score[h] = logits[t * uint(pc.r.logit_row) + h];
  } else {
    const uint team = tid / LANES, lane = tid % LANES;
    for (uint h0 = hs; h0 < H; h0 += NT / LANES) {  // every thread takes each step: barriers inside
      const uint h = h0 + team;
      float sum = 0.0;
      if (h < H)
        for (uint x = lane * 8u; x < D; x += LANES * 8u) {
          vec4 lo, hi;
          load_q(((b * H + h) * L + i) * D + x, D - x, lo, hi);
          sum += dot(lo, lo) + dot(hi, hi);
        }
      sh_lane[tid] = sum;
      barrier();
      if (h < H && lane == 0u) {
        float total = 0.0;
        for (uint l = 0u; l < LANES; ++l) total += sh_lane[tid + l];
        sh_score[h] = sqrt(total);
      }
      barrier();  // the lanes' sums are read before the next step overwrites them
    }
  }
  barrier();

  for (uint h = tid; h < H; h += NT) {
    uint above = 0u;
    if (h >= hs)
      for (uint o = hs; o < H; ++o) above += sh_score[o] > sh_score[h] || (sh_score[o] == sh_score[h] && o < h) ? 1u : 0u;
    sh_kept[h] = h < hs || above < k ? 1u : 0u;
  }
  barrier();

  // The learned gates: γ_h = α_s·shared_heads·softmax over the shared heads, and
  // γ_h = α_r·routed_k·exp(ℓ_h − max)/Σ_kept exp(ℓ − max) over the routed heads (max over all
  // of them), with [α_s, α_r] = 2·softmax(ℓ_heads, ℓ_heads+1), or 1 when either kind is absent.
  vec2 weight = vec2(0.0), norm = vec2(1.0);
  if (learned) {
    vec2 top = vec2(NEG_INF);
    for (uint h = tid; h < H; h += NT) {
      if (h < hs) top.x = max(top.x, sh_score[h]);
      else top.y = max(top.y, sh_score[h]);
    }
    top = workgroup_reduce(top, true);
    vec2 sum = vec2(0.0);
    for (uint h = tid; h < H; h += NT) {
      sh_weight[h] = sh_kept[h] != 0u ? accurate_exp(sh_score[h] - (h < hs ? top.x : top.y)) : 0.0;
      if (h < hs) sum.x += sh_weight[h];
      else sum.y += sh_weight[h];
    }
    norm = workgroup_reduce(sum, false);
    vec2 alpha = vec2(1.0);
    if (hs > 0u && k > 0u) {
      const float m = max(sh_score[H], sh_score[H + 1u]);
      const float e0 = accurate_exp(sh_score[H] - m), e1 = accurate_exp(sh_score[H + 1u] - m);
      alpha = vec2(2.0 * e0 / (e0 + e1), 2.0 * e1 / (e0 + e1));
    }
    weight = alpha * vec2(float(hs), float(k));
  }

  const uint n_act = hs + k;
  for (uint h = tid; h < H; h += NT) {
    const bool kept = sh_kept[h] != 0u;
    float gate = kept ? 1.0 : 0.0;
    if (learned && kept) gate = h < hs ? weight.x * sh_weight[h] / norm.x : weight.y * sh_weight[h] / norm.y;
    gates[(b * H + h) * L + i] = gate;
    if (!kept) continue;
    uint n = min(h, hs);  // the shared heads first, then the kept routed heads below h
    for (uint o = hs; o < h; ++o) n += sh_kept[o];
    heads_idx[t * n_act + n] = int(h);
  }
}
