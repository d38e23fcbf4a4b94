#version 450
// The copy half of the peaks probe: dst = src in 16-byte words, grid-stride, so the bandwidth
// counted (bytes read + written) is the device's, not one workgroup's.
layout(local_size_x_id = 0) in;

layout(binding = 0) readonly buffer Src { uvec4 src[]; };
layout(binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Push {
  uint words;   // 16-byte words to copy
  uint groups;  // workgroups launched
} pc;

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.groups) return;
  const uint stride = pc.groups * gl_WorkGroupSize.x;
  // Four independent loads in flight per thread before the first store.
  uint i = wg * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  for (; i + 3 * stride < pc.words; i += 4 * stride) {
    const uvec4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < pc.words; i += stride) dst[i] = src[i];
}
