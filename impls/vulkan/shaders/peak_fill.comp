#version 450
// The write half of the peaks probe: dst filled with pc.value in 16-byte words, grid-stride, four
// stores per iteration, so the bandwidth counted (bytes written) is the device's stores alone.
layout(local_size_x_id = 0) in;

layout(binding = 0) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Push {
  uint words;   // 16-byte words to write
  uint groups;  // workgroups launched
  uint value;
} pc;

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.groups) return;
  const uint stride = pc.groups * gl_WorkGroupSize.x;
  const uvec4 v = uvec4(pc.value);
  uint i = wg * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  for (; i + 3 * stride < pc.words; i += 4 * stride) {
    dst[i] = v;
    dst[i + stride] = v;
    dst[i + 2 * stride] = v;
    dst[i + 3 * stride] = v;
  }
  for (; i < pc.words; i += stride) dst[i] = v;
}
