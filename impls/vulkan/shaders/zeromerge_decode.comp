#version 450
// zeromerge_decode (reference/kvcomp/zeromerge_decode.cpp): ZeroMerge's decode steps, every step
// of a case in one dispatch (or a few: see step_begin below). One workgroup owns one row (sequence
// b, KV head g) and walks its steps in order: rows never exchange data (the ring slot is a
// function of the step), so no step waits on another workgroup. The cache lives in the outputs
// k_final, v_final, w_final, s_final, updated in place in its dtype; the dispatch with step_begin
// 0 first copies the row's k_cache, v_cache, w_cache and s_cache into them.
//
// A step t over n = fill(t) slots and the new token (key n):
//   attend  T lanes share a key (each holding CPL 8-element chunks of the head dimension) and the
//           NG = NT/T lane groups walk the n + 1 keys U at a time: each K and V row is read once
//           for all G query heads of the group (q in registers, pre-scaled). A logit is the
//           team's shuffle-summed dot plus λ·log w (accurate_log) of the slot; lane h mod T of the
//           team stores head h's logit in the workspace (G rows of budget + 1 per row), and every
//           lane keeps an online softmax (m, l, O of its chunks) per head. The lane groups merge
//           in shared memory in group order (deterministic); out = O/l in the dtype.
//   scores  lanes over slots: a_i = Σ_h e^(logit − max_h)/l_h in head order, then
//           s_i <- γ·s_i + a_i rounded once (decay_and_add), as the CPU's fma: scores add up
//           over every step, and a second rounding per step doubles their noise, which the
//           check's gate (twice the fp32 replay's error) barely holds. A lane also keeps its
//           least-scored mergeable slot. Every exp is accurate_exp (about 1 ulp on any driver).
//   append  while n < budget: slot n <- the new token (w 1, s a_n); merged_from = into = −1.
//   merge   i* = the workgroup's argmin of the kept candidates (subgroup min, then shared memory;
//           ties the lower slot); j* = the dense slot nearest k_{i*}: teams over dense slots as in
//           the attend phase, the same argmin; lanes over the head dimension merge i* into j*
//           (fp32, the quotient correctly rounded as the CPU's, then the dtype), move the ring
//           slot's token into i* and the new token into the ring slot; one lane moves the
//           weights and scores.
// Slots past the fill (NaN in the inputs) are never read.
//
// Lanes are numbered gl_SubgroupID·gl_SubgroupSize + gl_SubgroupInvocationID with T dividing the
// smallest subgroup size, so a team's shuffles never leave its subgroup; subgroup arithmetic is
// used for whole-subgroup reductions only, so any subgroup size works. Cache rows, weights, scores
// and logits are written by some lanes and read by others in the next phase: those buffers are
// coherent and every phase ends with a workgroup-scope barrier on buffer memory (row_barrier).
//
// llvmpipe ends an invocation's loops after 65535 iterations in all, so there the host cuts the
// steps into several dispatches [step_begin, step_end) (zeromerge_decode_vulkan.cpp), each
// starting from the cache the previous one left in the outputs.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;      // dtype.glsl: 0 f32, 1 f16, 2 bf16
layout(constant_id = 2) const uint D = 128u;        // head_dim
layout(constant_id = 3) const uint NCH = 16u;       // 8-element chunks per row: ceil(D / 8)
layout(constant_id = 4) const uint T = 8u;          // lanes per key: a power of two dividing the subgroup
layout(constant_id = 5) const uint CPL = 2u;        // chunks per lane: ceil(NCH / T)
layout(constant_id = 6) const uint G = 4u;          // query heads per KV head
layout(constant_id = 7) const uint U = 1u;          // keys per lane group per iteration
layout(constant_id = 8) const bool VEC = true;      // D·sizeof(dtype) is a multiple of 16
layout(constant_id = 9) const uint COPY_WORD = 4u;  // bytes per word of the cache's copy: 16, 4 or 2

#include "param_struct.glsl"
#include "load8.glsl"
#include "accurate_math.glsl"
#include "reference/kvcomp/zeromerge_common.h"
#include "kvcomp/zeromerge_decode_plan.h"

ATTNBENCH_PARAM_STRUCT(ZeromergeParams, ATTNBENCH_ZEROMERGE_FIELDS)
ATTNBENCH_PARAM_STRUCT(ZeromergeDecodePlan, ATTNBENCH_VK_ZEROMERGE_DECODE_PLAN)

layout(push_constant) uniform Push {
  ZeromergeParams s;
  ZeromergeDecodePlan plan;
} pc;

const uint NT = gl_WorkGroupSize.x;
const uint NG = NT / T;     // lane groups (teams)
const uint CV = 2u * CPL;   // vec4s of a row per lane
const uint DV4 = 2u * NCH;  // vec4s of a padded row

// A cache in the outputs: read and written by different lanes, under three views.
#define DECLARE_CACHE(BINDING, V4, V2, V1)                                         \
  layout(binding = BINDING) coherent buffer V4##_block { uvec4 V4[]; };            \
  layout(binding = BINDING) coherent buffer V2##_block { uint16_t V2[]; };         \
  layout(binding = BINDING) coherent buffer V1##_block { uint V1[]; };

DECLARE_INPUT(0, q4, q2, q1)     // q_new [batch, q_heads, steps, D]
DECLARE_INPUT(1, kn4, kn2, kn1)  // k_new [batch, kv_heads, steps, D]
DECLARE_INPUT(2, vn4, vn2, vn1)  // v_new
DECLARE_INPUT(3, kc4, kc2, kc1)  // k_cache [batch, kv_heads, budget, D]
DECLARE_INPUT(4, vc4, vc2, vc1)  // v_cache
layout(binding = 5) readonly buffer WCache { float w_cache[]; };  // [batch, kv_heads, budget]
layout(binding = 6) readonly buffer SCache { float s_cache[]; };  // same
layout(binding = 7) writeonly buffer Out32 { uint out1[]; };      // out [batch, q_heads, steps, D]
layout(binding = 7) writeonly buffer Out16 { uint16_t out2[]; };
DECLARE_CACHE(8, kf4, kf2, kf1)                                   // k_final [batch, kv_heads, budget, D]
DECLARE_CACHE(9, vf4, vf2, vf1)                                   // v_final
layout(binding = 10) coherent buffer WFinal { float w_final[]; };  // [batch, kv_heads, budget]
layout(binding = 11) coherent buffer SFinal { float s_final[]; };  // same
layout(binding = 12) writeonly buffer From { int merged_from[]; };  // [batch, kv_heads, steps]
layout(binding = 13) writeonly buffer Into { int merged_into[]; };  // same
layout(binding = 14) coherent buffer Logits { float logits[]; };    // [batch·kv_heads, G, budget + 1]

DEFINE_LOAD8(load_q, q4, q2, q1)
DEFINE_LOAD8(load_k_new, kn4, kn2, kn1)
DEFINE_LOAD8(load_v_new, vn4, vn2, vn1)
DEFINE_LOAD8(load_k, kf4, kf2, kf1)
DEFINE_LOAD8(load_v, vf4, vf2, vf1)

// One element of a cache row: its stored bits (a move copies them) and its value.
#define DEFINE_ELEMENT(NAME, V2, V1)                                                          \
  uint NAME##_bits(uint e) { return DTYPE == DT_F32 ? V1[e] : uint(V2[e]); }                 \
  float NAME##_value(uint e) {                                                                \
    const uint b = NAME##_bits(e);                                                            \
    return DTYPE == DT_F32 ? uintBitsToFloat(b) : (DTYPE == DT_BF16 ? bf16_bits_to_f32(b) : f16_bits_to_f32(b)); \
  }
#define DEFINE_ELEMENT_STORE(NAME, V2, V1)                                                    \
  void NAME##_set_bits(uint e, uint b) {                                                      \
    if (DTYPE == DT_F32) V1[e] = b;                                                           \
    else V2[e] = uint16_t(b);                                                                 \
  }                                                                                           \
  void NAME##_store(uint e, float x) {                                                        \
    NAME##_set_bits(e, DTYPE == DT_F32 ? floatBitsToUint(x) : f32_to_storage16(x, DTYPE));    \
  }
DEFINE_ELEMENT(k_new, kn2, kn1)
DEFINE_ELEMENT(v_new, vn2, vn1)
DEFINE_ELEMENT(k_slot, kf2, kf1)
DEFINE_ELEMENT(v_slot, vf2, vf1)
DEFINE_ELEMENT_STORE(k_slot, kf2, kf1)
DEFINE_ELEMENT_STORE(v_slot, vf2, vf1)

shared float sh_m[NG * G];      // each lane group's running maximum per head
shared float sh_l[NG * G];      // and its sum
shared vec4 sh_o[G * DV4];      // O of the group's heads, summed over the lane groups in order
shared float sh_key[NT];        // argmin: each subgroup's smallest key (at most NT subgroups)
shared uint sh_at[NT];          // and its smallest index among equal keys
shared float sh_a_new;          // the new token's attention at a merging step

// Veltkamp's split of x into halves of 12 significant bits: x = hi + lo exactly.
void zm_split(float x, out float hi, out float lo) {
  precise float c = 4097.0 * x;
  precise float h = c - (c - x);
  precise float l = x - h;
  hi = h;
  lo = l;
}

// γ·s + a rounded once (as one fma would, without relying on a driver to fuse): the product's
// exact error by Dekker's product, the sum's by Knuth's two-sum, added back before the last
// rounding. The scores accumulate over every step, so a second rounding per step would double
// their noise.
float decay_and_add(float gamma, float s, float a) {
  float gh, gl, sh, sl;
  zm_split(gamma, gh, gl);
  zm_split(s, sh, sl);
  precise float p = gamma * s;
  precise float pe = ((gh * sh - p) + gh * sl + gl * sh) + gl * sl;  // gamma·s = p + pe exactly
  precise float sum = p + a;
  precise float bb = sum - p;
  precise float se = (p - (sum - bb)) + (a - bb);  // p + a = sum + se exactly
  precise float r = sum + (pe + se);
  return r;
}

// a − q·b exactly when q is within an ulp of a/b (Dekker's product p + e = q·b; a − p exact by
// Sterbenz), as kivi_quant.comp computes it.
float zm_remainder(float a, float b, float q) {
  float qh, ql, bh, bl;
  zm_split(q, qh, ql);
  zm_split(b, bh, bl);
  precise float p = q * b;
  precise float e = ((qh * bh - p) + qh * bl + ql * bh) + ql * bl;
  precise float r = (a - p) - e;
  return r;
}

// a / b rounded to nearest (b > 0): Vulkan lets a division be 2.5 ulp off, so the device's
// quotient of |a| moves to its neighbour toward a/b while that one's remainder is smaller. A
// merged slot is then rounded once more, to the dtype, from the quotient the CPU's division
// gives, whatever the driver.
float zm_div(float a, float b) {
  const float mag = abs(a);
  precise float q = mag / b;
  if (mag == 0.0) return a;
  float r = zm_remainder(mag, b, q);
  for (uint step = 0u; step < 3u && r != 0.0; ++step) {
    const uint u = floatBitsToUint(q);
    const float next = uintBitsToFloat(r > 0.0 ? u + 1u : u - 1u);  // q > 0: toward a/b
    const float rn = zm_remainder(mag, b, next);
    if (abs(rn) >= abs(r)) break;
    q = next;
    r = rn;
  }
  return a < 0.0 ? -q : q;
}

// Every earlier write of the workgroup (buffers and shared memory) before every later read.
void row_barrier() {
  controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared,
                 gl_SemanticsAcquireRelease);
}

// The smallest key of the workgroup and, among equal keys, the smallest index, on every lane.
// Keys are finite or +inf (no candidate: index ~0u).
uint workgroup_argmin(float key, uint at) {
  const float sk = subgroupMin(key);
  const uint sa = subgroupMin(key == sk ? at : 0xffffffffu);
  if (subgroupElect()) {
    sh_key[gl_SubgroupID] = sk;
    sh_at[gl_SubgroupID] = sa;
  }
  row_barrier();
  float best = sh_key[0];
  uint best_at = sh_at[0];
  for (uint sg = 1u; sg < gl_NumSubgroups; ++sg) {
    const float k = sh_key[sg];
    const uint a = sh_at[sg];
    if (k < best || (k == best && a < best_at)) {
      best = k;
      best_at = a;
    }
  }
  row_barrier();  // sh_key and sh_at are free again
  return best_at;
}

// The cache's copy into the outputs, words of COPY_WORD bytes (kv_gather's scheme).
void copy_cache(uint row, uint lane) {
  const uint words = pc.plan.copy_words, first = row * words;
  for (uint x = lane; x < words; x += NT) {
    if (COPY_WORD == 16u) {
      kf4[first + x] = kc4[first + x];
      vf4[first + x] = vc4[first + x];
    } else if (COPY_WORD == 4u) {
      kf1[first + x] = kc1[first + x];
      vf1[first + x] = vc1[first + x];
    } else {
      kf2[first + x] = kc2[first + x];
      vf2[first + x] = vc2[first + x];
    }
  }
  const uint B = uint(pc.s.budget);
  for (uint i = lane; i < B; i += NT) {
    w_final[row * B + i] = w_cache[row * B + i];
    s_final[row * B + i] = s_cache[row * B + i];
  }
}

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= pc.plan.rows) return;  // the whole workgroup
  const uint lane = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
  const uint grp = lane / T, tl = lane % T;
  const uint B = uint(pc.s.budget), S = uint(pc.s.steps), M = uint(pc.s.dense);
  const uint mergeable_end = B - uint(pc.s.tail) + 1u;  // zm_mergeable_end
  const uint b = row / uint(pc.s.kv_heads), kvh = row % uint(pc.s.kv_heads), Hq = uint(pc.s.q_heads);
  const uint slot0 = row * B;                 // the row's first slot
  const uint LS = B + 1u;                     // logits per head: the slots and the new token
  const uint logit0 = row * G * LS;

  if (pc.plan.step_begin == 0u) copy_cache(row, lane);
  row_barrier();

  for (uint t = pc.plan.step_begin; t < pc.plan.step_end; ++t) {
    const uint n = min(uint(pc.s.filled) + t, B);  // zm_fill: slots holding tokens; key n is the new one
    const uint new_row = (row * S + t) * D;

    // --- attend: this lane's chunks of the group's queries, pre-scaled (as the CPU kernel)
    vec4 q[G][CV];
    vec4 acc[G][CV];
    float m[G], l[G];
    for (uint h = 0u; h < G; ++h) {
      const uint q_row = ((b * Hq + kvh * G + h) * S + t) * D;
      for (uint j = 0u; j < CPL; ++j) {
        const uint c = tl + j * T;
        vec4 lo = vec4(0.0), hi = vec4(0.0);
        if (c < NCH) load_q(q_row + c * 8u, D - c * 8u, lo, hi);
        q[h][2u * j] = lo * pc.s.scale;
        q[h][2u * j + 1u] = hi * pc.s.scale;
        acc[h][2u * j] = acc[h][2u * j + 1u] = vec4(0.0);
      }
      m[h] = NEG_INF;
      l[h] = 0.0;
    }
    for (uint base = 0u; base <= n; base += NG * U) {
      // Every load of the iteration is issued before the first use.
      vec4 kk[U][CV], vv[U][CV];
      float bias[U];
      for (uint u = 0u; u < U; ++u) {
        const uint i = base + u * NG + grp;
        bias[u] = 0.0;
        if (i < n) {
          const float w = w_final[slot0 + i];
          bias[u] = w == 1.0 ? 0.0 : pc.s.lambda * accurate_log(w);
        }
        for (uint j = 0u; j < CPL; ++j) {
          const uint c = tl + j * T;
          kk[u][2u * j] = kk[u][2u * j + 1u] = vv[u][2u * j] = vv[u][2u * j + 1u] = vec4(0.0);
          if (c >= NCH || i > n) continue;
          if (i < n) {
            load_k((slot0 + i) * D + c * 8u, D - c * 8u, kk[u][2u * j], kk[u][2u * j + 1u]);
            load_v((slot0 + i) * D + c * 8u, D - c * 8u, vv[u][2u * j], vv[u][2u * j + 1u]);
          } else {
            load_k_new(new_row + c * 8u, D - c * 8u, kk[u][2u * j], kk[u][2u * j + 1u]);
            load_v_new(new_row + c * 8u, D - c * 8u, vv[u][2u * j], vv[u][2u * j + 1u]);
          }
        }
      }
      for (uint h = 0u; h < G; ++h) {
        float s[U];
        float mt = NEG_INF;
        for (uint u = 0u; u < U; ++u) {
          const uint i = base + u * NG + grp;
          float dt = 0.0;
          for (uint j = 0u; j < CV; ++j) dt += dot(q[h][j], kk[u][j]);
          for (uint o = 1u; o < T; o <<= 1u) dt += subgroupShuffleXor(dt, o);
          s[u] = i <= n ? dt + bias[u] : NEG_INF;
          if (i <= n && tl == h % T) logits[logit0 + h * LS + i] = s[u];
          mt = max(mt, s[u]);
        }
        if (mt == NEG_INF) continue;  // no key of this lane group in this iteration
        if (mt > m[h]) {
          const float alpha = m[h] == NEG_INF ? 0.0 : accurate_exp(m[h] - mt);
          l[h] *= alpha;
          for (uint j = 0u; j < CV; ++j) acc[h][j] *= alpha;
          m[h] = mt;
        }
        for (uint u = 0u; u < U; ++u) {
          const float e = s[u] == NEG_INF ? 0.0 : accurate_exp(s[u] - m[h]);
          l[h] += e;
          for (uint j = 0u; j < CV; ++j) acc[h][j] += e * vv[u][j];
        }
      }
    }

    // --- the lane groups merged: each head's maximum and sum, then O added in group order
    if (tl == 0u)
      for (uint h = 0u; h < G; ++h) {
        sh_m[grp * G + h] = m[h];
        sh_l[grp * G + h] = l[h];
      }
    row_barrier();  // also publishes the logits for the scores
    const uint groups_with_keys = min(NG, n + 1u);
    float mx[G], inv_l[G];
    for (uint h = 0u; h < G; ++h) {
      mx[h] = NEG_INF;
      for (uint gg = 0u; gg < groups_with_keys; ++gg) mx[h] = max(mx[h], sh_m[gg * G + h]);
      float total = 0.0;
      for (uint gg = 0u; gg < groups_with_keys; ++gg) total += sh_l[gg * G + h] * accurate_exp(sh_m[gg * G + h] - mx[h]);
      inv_l[h] = 1.0 / total;
      // This lane group's weight in the merge (0 when it saw no key).
      const float wgt = m[h] == NEG_INF ? 0.0 : accurate_exp(m[h] - mx[h]);
      for (uint j = 0u; j < CV; ++j) acc[h][j] *= wgt;
    }
    for (uint gg = 0u; gg < groups_with_keys; ++gg) {
      if (grp == gg)
        for (uint h = 0u; h < G; ++h)
          for (uint j = 0u; j < CPL; ++j) {
            const uint c = tl + j * T;
            if (c >= NCH) continue;
            const uint at = h * DV4 + 2u * c;
            sh_o[at] = gg == 0u ? acc[h][2u * j] : sh_o[at] + acc[h][2u * j];
            sh_o[at + 1u] = gg == 0u ? acc[h][2u * j + 1u] : sh_o[at + 1u] + acc[h][2u * j + 1u];
          }
      barrier();
    }
    for (uint h = 0u; h < G; ++h) {
      const uint out_row = ((b * Hq + kvh * G + h) * S + t) * D;
      for (uint x = lane; x < D; x += NT) {
        const float o = sh_o[h * DV4 + x / 4u][x % 4u] * inv_l[h];
        if (DTYPE == DT_F32) out1[out_row + x] = floatBitsToUint(o);
        else out2[out_row + x] = uint16_t(f32_to_storage16(o, DTYPE));
      }
    }

    // --- scores: lanes over the slots; each keeps its least-scored mergeable slot
    float best = ACC_POS_INF;
    uint best_at = 0xffffffffu;
    for (uint i = lane; i <= n; i += NT) {
      float a = 0.0;
      for (uint h = 0u; h < G; ++h) a = fma(accurate_exp(logits[logit0 + h * LS + i] - mx[h]), inv_l[h], a);
      if (i < n) {
        const float sc = decay_and_add(pc.s.decay, s_final[slot0 + i], a);
        s_final[slot0 + i] = sc;
        if (i >= M && i < mergeable_end && sc < best) {  // slots ascend: the lower slot keeps a tie
          best = sc;
          best_at = i;
        }
      } else if (n < B) {
        s_final[slot0 + n] = a;
        w_final[slot0 + n] = 1.0;
      } else {
        sh_a_new = a;
      }
    }

    if (n < B) {  // --- append: the new token stays in slot n
      for (uint x = lane; x < D; x += NT) {
        k_slot_set_bits((slot0 + n) * D + x, k_new_bits(new_row + x));
        v_slot_set_bits((slot0 + n) * D + x, v_new_bits(new_row + x));
      }
      if (lane == 0u) merged_from[row * S + t] = merged_into[row * S + t] = -1;
      row_barrier();
      continue;
    }

    // --- merge: i*, then the dense slot j* nearest k_{i*} (teams over the dense slots)
    const uint i_star = workgroup_argmin(best, best_at);  // its barriers publish the scores
    vec4 ki[CV];
    for (uint j = 0u; j < CPL; ++j) {
      const uint c = tl + j * T;
      ki[2u * j] = ki[2u * j + 1u] = vec4(0.0);
      if (c < NCH) load_k((slot0 + i_star) * D + c * 8u, D - c * 8u, ki[2u * j], ki[2u * j + 1u]);
    }
    float nearest = ACC_POS_INF;  // smaller is nearer: −k_i·k_j, or ‖k_i − k_j‖²
    uint nearest_at = 0xffffffffu;
    for (uint base = 0u; base < M; base += NG) {
      const uint j_slot = base + grp;
      float metric = 0.0;
      for (uint j = 0u; j < CPL; ++j) {
        const uint c = tl + j * T;
        if (c >= NCH || j_slot >= M) continue;
        vec4 lo, hi;
        load_k((slot0 + j_slot) * D + c * 8u, D - c * 8u, lo, hi);
        if (pc.s.metric_l2 != 0) {
          const vec4 d0 = ki[2u * j] - lo, d1 = ki[2u * j + 1u] - hi;
          metric += dot(d0, d0) + dot(d1, d1);
        } else {
          metric += dot(ki[2u * j], lo) + dot(ki[2u * j + 1u], hi);
        }
      }
      for (uint o = 1u; o < T; o <<= 1u) metric += subgroupShuffleXor(metric, o);
      if (pc.s.metric_l2 == 0) metric = -metric;
      if (j_slot < M && metric < nearest) {  // slots ascend: the lower slot keeps a tie
        nearest = metric;
        nearest_at = j_slot;
      }
    }
    const uint j_star = workgroup_argmin(nearest, nearest_at);

    // Merge i* into j* (fp32, then the dtype); the departing ring token into i*, the new token
    // into the ring slot. Each lane reads and writes only its own elements of the three slots.
    const uint ring = mergeable_end + (t - (B - uint(pc.s.filled))) % (uint(pc.s.tail) - 1u);  // zm_ring_slot
    const float wi = w_final[slot0 + i_star], wj = w_final[slot0 + j_star], wij = wi + wj;
    for (uint x = lane; x < D; x += NT) {
      const uint xi = (slot0 + i_star) * D + x, xj = (slot0 + j_star) * D + x, xr = (slot0 + ring) * D + x;
      k_slot_store(xj, zm_div(fma(wi, k_slot_value(xi), wj * k_slot_value(xj)), wij));
      v_slot_store(xj, zm_div(fma(wi, v_slot_value(xi), wj * v_slot_value(xj)), wij));
      k_slot_set_bits(xi, k_slot_bits(xr));
      v_slot_set_bits(xi, v_slot_bits(xr));
      k_slot_set_bits(xr, k_new_bits(new_row + x));
      v_slot_set_bits(xr, v_new_bits(new_row + x));
    }
    row_barrier();  // every lane read the weights before they move
    if (lane == 0u) {
      const float si = s_final[slot0 + i_star], sj = s_final[slot0 + j_star];
      w_final[slot0 + j_star] = wij;
      s_final[slot0 + j_star] = pc.s.score_sum != 0 ? si + sj : max(si, sj);
      w_final[slot0 + i_star] = w_final[slot0 + ring];
      s_final[slot0 + i_star] = s_final[slot0 + ring];
      w_final[slot0 + ring] = 1.0;
      s_final[slot0 + ring] = sh_a_new;
      merged_from[row * S + t] = int(i_star);
      merged_into[row * S + t] = int(j_star);
    }
    row_barrier();
  }
}
