#version 450
// Writes words [first, first + count) of one Philox stream and their fp32 uniforms, so tests
// can compare the device's generator with the host's (tests/vulkan/shaders/philox_vulkan_test.cpp).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

#include "philox.glsl"

layout(binding = 0) writeonly buffer Words { uint words[]; };
layout(binding = 1) writeonly buffer Uniforms { float uniforms[]; };
layout(push_constant) uniform Push {
  uvec2 key;
  uint stream, domain;
  uint first_lo, first_hi;
  uint count;
} pc;

void main() {
  const uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= pc.count) return;
  const uint lo = pc.first_lo + i;
  const uint hi = pc.first_hi + (lo < i ? 1u : 0u);  // carry of the 64-bit index
  const uint w = philox_word(pc.key, pc.stream, pc.domain, lo, hi);
  words[i] = w;
  uniforms[i] = philox_uniform_f32(w);
}
