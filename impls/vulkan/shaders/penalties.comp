#version 450
// penalties (reference/decoding/penalties.cpp): one workgroup per row. The row's counts are zeroed,
// the history is scattered into them by atomics (workgroup scope: only this workgroup touches the
// row), and each logit is penalised where its count is non-zero, in the order of
// penalties_common.h's penalised().
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_memory_scope_semantics : require

layout(local_size_x_id = 0) in;

#include "param_struct.glsl"
#include "reference/decoding/penalties_common.h"

ATTNBENCH_PARAM_STRUCT(PenaltiesParams, ATTNBENCH_PENALTIES_FIELDS)

layout(push_constant) uniform Push {
  PenaltiesParams p;
} pc;

layout(binding = 0) readonly buffer Logits { float logits[]; };      // [batch, V]
layout(binding = 1) readonly buffer History { int history[]; };      // [batch, L]
layout(binding = 2) writeonly buffer Out { float logits_out[]; };    // [batch, V]
layout(binding = 3) coherent buffer Counts { uint counts[]; };       // [batch, V]

// The counts' writes (zeroing, then the scatter) before other lanes read them.
void row_barrier() {
  controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
}

void main() {
  const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= uint(pc.p.batch)) return;  // whole workgroups
  const uint V = uint(pc.p.vocab), L = uint(pc.p.history), lane = gl_LocalInvocationID.x, T = gl_WorkGroupSize.x;
  const uint base = row * V;
  for (uint x = lane; x < V; x += T) counts[base + x] = 0u;
  row_barrier();
  for (uint i = lane; i < L; i += T) atomicAdd(counts[base + uint(history[row * L + i])], 1u, gl_ScopeWorkgroup, 0, 0);
  row_barrier();
  for (uint x = lane; x < V; x += T) {
    const int n = int(counts[base + x]);
    const float z = logits[base + x];
    float r = z;
    if (n > 0) {
      r = z > 0.0 ? z / pc.p.repetition : z * pc.p.repetition;
      r = r - pc.p.frequency * float(n);
      r = r - pc.p.presence;
    }
    logits_out[base + x] = r;
  }
}
