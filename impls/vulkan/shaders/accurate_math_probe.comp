#version 450
// Evaluates accurate_log and accurate_exp (accurate_math.glsl) on a buffer of inputs, so tests
// can measure them against fp64 on the device (tests/vulkan/shaders/accurate_math_vulkan_test.cpp).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

#include "accurate_math.glsl"

layout(binding = 0) readonly buffer In { float x[]; };
layout(binding = 1) writeonly buffer Log { float log_x[]; };
layout(binding = 2) writeonly buffer Exp { float exp_x[]; };

layout(push_constant) uniform Push { uint count; } pc;

void main() {
  const uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= pc.count) return;
  log_x[i] = accurate_log(x[i]);
  exp_x[i] = accurate_exp(x[i]);
}
