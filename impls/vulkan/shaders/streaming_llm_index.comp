#version 450
// streaming_llm's kept positions (semantics: reference/kvcomp/streaming_llm.cpp): the same for
// every row (b, g): the sinks [0, sinks), then the recent window that ends at kv_len; −1 beyond
// `kept`; kept_len = kept. One invocation per slot of kept_idx; kv_gather.comp then copies the rows.
layout(local_size_x_id = 0) in;

layout(binding = 0) writeonly buffer KeptIdx { int kept_idx[]; };  // [rows, budget]
layout(binding = 1) writeonly buffer KeptLen { int kept_len[]; };  // [rows]

layout(push_constant) uniform Push {
  uint rows, budget, kv_len, kept, sinks;
} pc;

void main() {
  const uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= pc.rows * pc.budget) return;
  const uint r = i % pc.budget;
  kept_idx[i] = r >= pc.kept ? -1 : int(r < pc.sinks ? r : r + (pc.kv_len - pc.kept));
  if (r == 0u) kept_len[i / pc.budget] = int(pc.kept);
}
