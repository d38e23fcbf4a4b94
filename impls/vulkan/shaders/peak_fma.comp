#version 450
// The arithmetic half of the peaks probe: eight independent vec4 FMA chains per invocation hide
// the FMA latency; the result is stored so the compiler cannot drop the loop.
layout(local_size_x_id = 0) in;

layout(binding = 0) writeonly buffer Out { vec4 sink[]; };
layout(push_constant) uniform Push {
  uint iterations;
  uint groups;
  float a;  // 0.999999: the chains neither overflow nor collapse to a constant
  float b;
} pc;

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.groups) return;
  const uint id = wg * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  vec4 x[8];
  for (int k = 0; k < 8; ++k) x[k] = vec4(float(id & 255u) * 1e-3 + float(k));
  for (uint it = 0; it < pc.iterations; ++it)
    for (int k = 0; k < 8; ++k) x[k] = fma(x[k], vec4(pc.a), vec4(pc.b));
  vec4 s = vec4(0);
  for (int k = 0; k < 8; ++k) s += x[k];
  sink[id] = s;
}
