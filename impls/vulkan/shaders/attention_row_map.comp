#version 450
// Head-sparse attention's first pass (reference/attention/attention_common.h): one workgroup per
// (batch, KV head) compacts the group's active rows (gate ≠ 0), in packed order r = i·group + h,
// into its row map and count, which the attention kernels and the merge then walk; a skipped
// row gets O = 0 and LSE = −inf here and is never touched again. The rows go NT at a time: each
// thread flags one, an inclusive scan over shared memory gives the active rows' positions (the
// map ascends, whatever the schedule), and the workgroup zeroes the skipped rows' O together.
// It binds the attention kernels' twelve buffers and takes their push constants.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;

#define ATTENTION_ROW_MAP_WRITER
#include "attention_common.glsl"

const uint NT = gl_WorkGroupSize.x;

layout(binding = 4) writeonly buffer O32 { uint o1[]; };
layout(binding = 4) writeonly buffer O16 { uint16_t o2[]; };
layout(binding = 5) writeonly buffer Lse { float lse[]; };

shared uint sh_scan[NT];
shared uint sh_orow[NT];  // the chunk's rows of O; ~0u for an active row or past the group's end

void main() {
  const uint bh = workgroup_index();
  if (bh >= uint(pc.s.batch) * uint(pc.s.kv_heads)) return;
  const uint b = bh / uint(pc.s.kv_heads), kvh = bh % uint(pc.s.kv_heads);
  const uint tid = gl_LocalInvocationIndex, rows = pc.plan.rows, dv = uint(pc.s.v_head_dim);
  uint count = 0u;
  for (uint r0 = 0u; r0 < rows; r0 += NT) {
    const uint r = r0 + tid;
    const uint orow = r < rows ? out_row(b, head_of(kvh, r), pos_of(r)) : 0u;
    const uint running = r < rows && row_gates[orow] != 0.0 ? 1u : 0u;
    sh_orow[tid] = r < rows && running == 0u ? orow : ~0u;
    sh_scan[tid] = running;
    barrier();
    for (uint o = 1u; o < NT; o <<= 1u) {
      const uint below = tid >= o ? sh_scan[tid - o] : 0u;
      barrier();
      sh_scan[tid] += below;
      barrier();
    }
    if (running != 0u) row_map[bh * rows + count + sh_scan[tid] - 1u] = int(r);
    else if (r < rows) lse[orow] = NEG_INF;
    for (uint idx = tid; idx < NT * dv; idx += NT) {
      const uint skipped = sh_orow[idx / dv], x = idx % dv;
      if (skipped == ~0u) continue;
      if (DTYPE == DT_F32) o1[skipped * dv + x] = 0u;
      else o2[skipped * dv + x] = uint16_t(0u);
    }
    count += sh_scan[NT - 1u];
    barrier();  // every thread has read the chunk's scan before the next one overwrites it
  }
  if (tid == 0u) row_count[bh] = int(count);
}
