#version 450
// The read half of the peaks probe: src read in 16-byte words, grid-stride, folded by XOR into
// four independent accumulators (four loads in flight per invocation, and integer work far below
// the bandwidth). The fold is stored only when it equals pc.never, a value the host's fill cannot
// produce: the compiler cannot drop the loads, and no write traffic joins the bytes counted.
layout(local_size_x_id = 0) in;

layout(binding = 0) readonly buffer Src { uvec4 src[]; };
layout(binding = 1) writeonly buffer Sink { uvec4 sink[]; };  // one word per invocation
layout(push_constant) uniform Push {
  uint words;   // 16-byte words to read
  uint groups;  // workgroups launched
  uint never;   // see above
} pc;

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.groups) return;
  const uint stride = pc.groups * gl_WorkGroupSize.x;
  const uint id = wg * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  uvec4 a = uvec4(0), b = uvec4(0), c = uvec4(0), d = uvec4(0);
  uint i = id;
  for (; i + 3 * stride < pc.words; i += 4 * stride) {
    a ^= src[i];
    b ^= src[i + stride];
    c ^= src[i + 2 * stride];
    d ^= src[i + 3 * stride];
  }
  for (; i < pc.words; i += stride) a ^= src[i];
  const uvec4 s = a ^ b ^ c ^ d;
  if ((s.x ^ s.y ^ s.z ^ s.w) == pc.never) sink[id] = s;
}
