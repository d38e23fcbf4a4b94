#version 450
// Writes the uniforms speculative_sampling_race draws, through the same index helpers (and the
// race stage's block walk, race.glsl), so
// tests can compare them with the host's streams (tests/vulkan/decoding/speculative_sampling_vulkan_test.cpp):
//   accept: invocation a < rows·K writes words and uniforms of (row0 + a / K, a % K)
//   race:   invocation a < rows·(K+1)·spans walks the stretch of (row0 + row, position, span)
//           in Philox blocks, as the race kernel does, and writes every token's word and uniform
//           at ((row·(K+1) + position)·V + token)
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

#include "speculative_sampling_draws.glsl"

layout(binding = 0) writeonly buffer AcceptWords { uint accept_words[]; };
layout(binding = 1) writeonly buffer AcceptUniforms { float accept_uniforms[]; };
layout(binding = 2) writeonly buffer RaceWords { uint race_words[]; };
layout(binding = 3) writeonly buffer RaceUniforms { float race_uniforms[]; };

layout(push_constant) uniform Push {
  uvec2 key;
  uint accept_stream, race_stream;
  uint row0, rows, K, V;
  uint spans, span_len;
} pc;

void main() {
  const uint a = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  const uint K = pc.K, V = pc.V;
  if (a < pc.rows * K) {
    const uint w = accept_word(pc.key, pc.accept_stream, pc.row0 + a / K, K, a % K);
    accept_words[a] = w;
    accept_uniforms[a] = philox_uniform_f32(w);
  }
  if (a >= pc.rows * (K + 1u) * pc.spans) return;
  const uint span = a % pc.spans, rt = a / pc.spans;
  const uint row = rt / (K + 1u), position = rt % (K + 1u);
  const uint x0 = span * pc.span_len;
  if (x0 >= V) return;
  const uint len = min(pc.span_len, V - x0);
  const RaceStretch st = race_stretch(speculative_race_first(pc.row0 + row, K, position, V), x0);
  for (uint b = 0u; b < race_stretch_blocks(st, len); ++b) {
    const uvec4 words = race_block(pc.key, pc.race_stream, st, b);
    for (uint j = 0u; j < 4u; ++j) {
      const int rel = int(4u * b + j) - int(st.lead);
      if (rel < 0 || rel >= int(len)) continue;
      const uint at = (row * (K + 1u) + position) * V + x0 + uint(rel);
      race_words[at] = words[j];
      race_uniforms[at] = philox_uniform_f32(words[j]);
    }
  }
}
