#version 450
// tree_verify, stage 1 (reference/decoding/tree_verify.cpp; the host side in
// decoding/tree_verify_vulkan.cpp): one workgroup per (tree, node) pair reduces the node's
// distribution p = target_probs[b, u] once, the read the method is bound by. Lanes stride over the
// vocabulary (consecutive lanes on consecutive floats, four loads in flight per lane), keeping
//   - the first maximum they see (a strict compare over ascending indices), and
//   - in typical mode the entropy: each term p·ln max(p, FLT_MIN) rounded in fp32 (ln to about an
//     ulp, accurate_math.glsl: GLSL's log has no relative bound near 1), summed in fp64, as the
//     spec's error bound 8u·(1 + H) on τ assumes.
// A shared-memory tree (no subgroup operation, so any subgroup size) merges the lanes: the larger
// value, the lower index among equals; the fp64 sums. Lane 0 writes the node's argmax and its
// typical threshold τ = min(ε, δ·exp(−H)) in fp32 (exp to about an ulp) to `stats`, which stage 2
// (tree_verify_paths.comp) reads in the next dispatch.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

const uint T = gl_WorkGroupSize.x;  // a power of two (the host's plan)

#include "accurate_math.glsl"
#include "param_struct.glsl"
#include "reference/decoding/tree_common.h"

ATTNBENCH_PARAM_STRUCT(TreeVerifyParams, ATTNBENCH_TREE_VERIFY_FIELDS)

layout(push_constant) uniform Push {
  TreeVerifyParams p;
} pc;

layout(binding = 0) readonly buffer Probs { float probs[]; };  // [batch, n, V]
layout(binding = 1) writeonly buffer Stats { uint stats[]; };  // [batch, n, 2]: argmax, τ's bits

shared float sh_best[T];
shared uint sh_index[T];
shared double sh_sum[T];

const float FLT_MIN_ = 1.1754943508222875e-38;

// The lane's running maximum: strict, so over ascending x the first of equal maxima stays.
void keep(float v, uint x, inout float best, inout uint index) {
  if (v > best) {
    best = v;
    index = x;
  }
}

double term(float v) {
  precise const float t = v * accurate_log(max(v, FLT_MIN_));  // rounded in fp32, then widened
  return double(t);
}

void main() {
  const uint pair = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (pair >= uint(pc.p.batch) * uint(pc.p.nodes)) return;  // whole workgroups: barriers stay uniform
  const uint lane = gl_LocalInvocationID.x;
  const uint V = uint(pc.p.vocab);
  const bool typical = pc.p.mode == 1;
  const uint row = pair * V;

  float best = ACC_NEG_INF;
  uint index = 0xffffffffu;
  double sum = 0.0lf;
  uint x = lane;
  // Four strided loads issued before they are used: more bytes in flight per lane.
  for (; x + 3u * T < V; x += 4u * T) {
    const float v0 = probs[row + x], v1 = probs[row + x + T], v2 = probs[row + x + 2u * T],
                v3 = probs[row + x + 3u * T];
    keep(v0, x, best, index);
    keep(v1, x + T, best, index);
    keep(v2, x + 2u * T, best, index);
    keep(v3, x + 3u * T, best, index);
    if (typical) sum += (term(v0) + term(v1)) + (term(v2) + term(v3));
  }
  for (; x < V; x += T) {
    const float v = probs[row + x];
    keep(v, x, best, index);
    if (typical) sum += term(v);
  }

  sh_best[lane] = best;
  sh_index[lane] = index;
  sh_sum[lane] = sum;
  barrier();
  for (uint s = T / 2u; s > 0u; s >>= 1u) {
    if (lane < s) {
      const float ob = sh_best[lane + s];
      const uint oi = sh_index[lane + s];
      if (ob > sh_best[lane] || (ob == sh_best[lane] && oi < sh_index[lane])) {
        sh_best[lane] = ob;
        sh_index[lane] = oi;
      }
      sh_sum[lane] += sh_sum[lane + s];
    }
    barrier();
  }
  if (lane == 0u) {
    float tau = pc.p.epsilon;
    if (typical) {
      const float h = float(-sh_sum[0]);
      precise const float scaled = pc.p.delta * accurate_exp(-h);
      tau = min(pc.p.epsilon, scaled);
    }
    stats[2u * pair] = sh_index[0];
    stats[2u * pair + 1u] = floatBitsToUint(tau);
  }
}
