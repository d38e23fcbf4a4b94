#version 450
// eagle2_tree, stage 1 (reference/decoding/eagle2_tree.cpp; the host side in
// decoding/eagle2_tree_vulkan.cpp): one workgroup per row of draft logits (batch · slots rows)
// reduces it to its top k tokens and their log-softmax values:
//   1. the lanes' maxima (a pass without atomics): the largest logit m, and the k-th largest of
//      the maxima as a floor — each maximum is a distinct logit, so at least k logits reach it;
//   2. one pass sums S = Σ exp(z − m) — fp32 terms (exp to about an ulp, accurate_math.glsl) in
//      fp64, each lane its own strided terms, then a shared-memory tree in a fixed order — and
//      gathers the logits at or above the floor (a few dozen) by an atomic counter; when more than
//      CAP reach it (planted ties), eagle2_radix.glsl's selection over the row's keys finds the
//      top k exactly and one more pass gathers them;
//   3. the top k in order: each gathered key's rank among them (value descending, index
//      ascending: the keys are unique, so no tie is left to the schedule);
//   4. ℓ_r = (z_r − m) − ln(fl32(S)) in fp32 (ln to about an ulp), the spec's contract, written
//      with the tokens to the [rows, k] scratch stage 2 (eagle2_select.comp) reads.
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require

layout(local_size_x_id = 0) in;

const uint T = gl_WorkGroupSize.x;  // a power of two ≤ 1024 (the host's plan)

#include "accurate_math.glsl"
#include "param_struct.glsl"
#include "reference/decoding/eagle2_common.h"

ATTNBENCH_PARAM_STRUCT(Eagle2Params, ATTNBENCH_EAGLE2_FIELDS)

layout(push_constant) uniform Push {
  Eagle2Params p;
} pc;

layout(binding = 0) readonly buffer Logits { float logits[]; };  // [batch, slots, V]
layout(binding = 1) writeonly buffer Top { uint top[]; };        // [batch, slots, k, 2]: token, ℓ's bits

uint row_base = 0u;

void e2_key(uint i, out uint hi, out uint lo);
#include "eagle2_radix.glsl"

void e2_key(uint i, out uint hi, out uint lo) {
  hi = e2_order(logits[row_base + i]);
  lo = 0xfffffu - i;
}

const uint CAP = 256u;  // logits at or above the floor kept in shared memory; more: the radix path

shared uint sh_n;
shared uint sh_hi[CAP], sh_lo[CAP];  // the gathered: all those at or above the floor, or the top k
shared uint sh_tok[32];
shared float sh_z[32];
shared double sh_sum[T];
shared uint sh_max[T];  // each lane's largest key
shared uint sh_floor, sh_top;

void main() {
  const uint q = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (q >= uint(pc.p.batch) * uint(pc.p.slots)) return;  // whole workgroups: barriers stay uniform
  const uint lane = gl_LocalInvocationID.x;
  const uint V = uint(pc.p.vocab), k = uint(pc.p.top_k);
  row_base = q * V;
  if (lane == 0u) sh_n = 0u;

  // 1. The lanes' maxima: the largest, and the k-th largest as the floor.
  uint best = 0u;
  for (uint i = lane; i < V; i += T) best = max(best, e2_order(logits[row_base + i]));
  sh_max[lane] = best;
  barrier();
  uint above = 0u, reach = 0u;
  for (uint j = 0u; j < T; ++j) {
    above += sh_max[j] > best ? 1u : 0u;
    reach += sh_max[j] >= best ? 1u : 0u;
  }
  if (above < k && k <= reach) sh_floor = best;  // the k-th largest (lanes holding it agree)
  if (above == 0u) sh_top = best;                 // the largest
  barrier();
  const uint floor_key = sh_floor, top_key = sh_top;
  const float m = uintBitsToFloat((top_key & 0x80000000u) != 0u ? (top_key & 0x7fffffffu) : ~top_key);

  // 2. One pass sums the exps (fp32 terms in fp64) and gathers the logits at or above the floor.
  double s = 0.0lf;
  for (uint i = lane; i < V; i += T) {
    const float z = logits[row_base + i];
    precise const float d = z - m;
    s += double(accurate_exp(d));
    const uint hi = e2_order(z);
    if (hi < floor_key) continue;
    const uint j = atomicAdd(sh_n, 1u, gl_ScopeWorkgroup, 0, 0);
    if (j < CAP) {
      sh_hi[j] = hi;
      sh_lo[j] = 0xfffffu - i;
    }
  }
  sh_sum[lane] = s;
  barrier();
  uint count = sh_n;
  if (count > CAP) {
    // Too many tie at the floor (planted ties): the radix selection over the row, then a pass
    // that gathers exactly the k.
    barrier();  // every lane has read sh_n
    if (lane == 0u) sh_n = 0u;
    const uvec4 t = e2_select(V, k, floor_key);  // its first barrier orders the reset
    for (uint i = lane; i < V; i += T) {
      uint hi, lo;
      e2_key(i, hi, lo);
      if (hi < floor_key || !e2_selected(t, hi, lo)) continue;  // the uncounted share the last bin's bits
      const uint j = atomicAdd(sh_n, 1u, gl_ScopeWorkgroup, 0, 0);
      if (j < CAP) {
        sh_hi[j] = hi;
        sh_lo[j] = lo;
      }
    }
    barrier();
    count = k;
  }
  // 3. Each gathered logit's rank among them (keys are unique); the first k in order.
  uint rank[CAP / 32u];  // at most CAP / T ≤ 8 items a lane
  for (uint j = lane, u = 0u; j < count; j += T, ++u) {
    rank[u] = 0u;
    for (uint o = 0u; o < count && rank[u] < k; ++o)
      if (sh_hi[o] > sh_hi[j] || (sh_hi[o] == sh_hi[j] && sh_lo[o] > sh_lo[j])) ++rank[u];
  }
  barrier();
  for (uint j = lane, u = 0u; j < count; j += T, ++u) {
    if (rank[u] >= k) continue;
    const uint x = 0xfffffu - sh_lo[j];
    sh_tok[rank[u]] = x;
    sh_z[rank[u]] = logits[row_base + x];
  }
  for (uint half_ = T / 2u; half_ > 0u; half_ >>= 1u) {  // its first barrier orders sh_tok, sh_z
    barrier();
    if (lane < half_) sh_sum[lane] += sh_sum[lane + half_];
  }
  barrier();

  // 4. The log-softmax of the k.
  if (lane < k) {
    const float lse = accurate_log(float(sh_sum[0]));
    precise const float d = sh_z[lane] - m;
    precise const float ell = d - lse;
    top[(q * k + lane) * 2u] = sh_tok[lane];
    top[(q * k + lane) * 2u + 1u] = floatBitsToUint(ell);
  }
}
