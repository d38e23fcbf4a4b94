#version 450
// The projection stage (reference/attention/projection_common.h): for each problem z = (o, i),
// Y = X·W over the rows of o, fp32 sums, and X's pass-through tail copied after Y's n columns.
// A workgroup owns a BM x BN tile of one problem's Y; X and W come through shared memory BK
// columns at a time (zero past the row's k or the tile's edge) and each thread keeps a TM x TN
// block of sums in registers, its rows RT apart and its columns CTN apart so a subgroup reads
// shared memory without bank conflicts. Each sum runs over x in index order, as the fp32 baseline
// does; each output rounds once (to f32 with y_f32: moh's router logits). The workgroups of the
// first column tile copy the tail, bit for bit.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint DTYPE = 0u;
layout(constant_id = 2) const uint BM = 64u;  // rows per tile
layout(constant_id = 3) const uint BN = 64u;  // output columns per tile
layout(constant_id = 4) const uint BK = 16u;  // reduction columns per step
layout(constant_id = 5) const uint TM = 4u;   // rows per thread
layout(constant_id = 6) const uint TN = 4u;   // columns per thread

#include "dtype.glsl"
#include "param_struct.glsl"
#include "reference/attention/projection_common.h"
#include "attention/projection_stage.h"

ATTNBENCH_PARAM_STRUCT(ProjectionParams, ATTNBENCH_PROJECTION_FIELDS)
ATTNBENCH_PARAM_STRUCT(ProjectionPlan, ATTNBENCH_VK_PROJECTION_PLAN)

layout(push_constant) uniform Push {
  ProjectionParams s;
  ProjectionPlan plan;
} pc;

const uint NT = gl_WorkGroupSize.x;  // RT · CTN
const uint RT = BM / TM;             // thread rows
const uint CTN = BN / TN;            // thread columns
const uint XS = BM + 1u;             // row strides of the tiles: the pad spreads the stores over banks
const uint WS = BN + 1u;

layout(binding = 0) readonly buffer X32 { uint x1[]; };
layout(binding = 0) readonly buffer X16 { uint16_t x2[]; };
layout(binding = 1) readonly buffer W32 { uint w1[]; };
layout(binding = 1) readonly buffer W16 { uint16_t w2[]; };
layout(binding = 2) readonly buffer KvLen { int kv_len[]; };  // [outer], read with limit_rows
layout(binding = 3) writeonly buffer Y32 { uint y1[]; };
layout(binding = 3) writeonly buffer Y16 { uint16_t y2[]; };

shared float Xs[BK * XS];  // [x][row]
shared float Ws[BK * WS];  // [x][column]

float load_x(uint e) {
  if (DTYPE == DT_F32) return uintBitsToFloat(x1[e]);
  if (DTYPE == DT_F16) return f16_bits_to_f32(uint(x2[e]));
  return bf16_bits_to_f32(uint(x2[e]));
}

float load_w(uint e) {
  if (DTYPE == DT_F32) return uintBitsToFloat(w1[e]);
  if (DTYPE == DT_F16) return f16_bits_to_f32(uint(w2[e]));
  return bf16_bits_to_f32(uint(w2[e]));
}

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;
  const uint tn = wg % pc.plan.tiles_n;
  const uint tm = (wg / pc.plan.tiles_n) % pc.plan.tiles_m;
  const uint z = wg / (pc.plan.tiles_n * pc.plan.tiles_m);
  const uint o = z / uint(pc.s.inner), i = z % uint(pc.s.inner);
  const uint rows = pc.s.limit_rows != 0 ? uint(clamp(kv_len[o], 0, pc.s.m)) : uint(pc.s.m);
  const uint r0 = tm * BM, c0 = tn * BN;
  if (r0 >= rows) return;  // the whole workgroup: past the sequence's length
  const uint n = uint(pc.s.n), k = uint(pc.s.k);
  const uint xb = o * uint(pc.s.x_outer) + i * uint(pc.s.x_inner);
  const uint yb = o * uint(pc.s.y_outer) + i * uint(pc.s.y_inner);
  const uint wb = i * uint(pc.s.w_inner);
  const uint xrow = uint(pc.s.x_row), yrow = uint(pc.s.y_row), wn = uint(pc.s.w_n), wk = uint(pc.s.w_k);
  const uint tid = gl_LocalInvocationIndex;
  const uint ty = tid / CTN, tx = tid % CTN;

  float acc[TM][TN];
  for (uint a = 0u; a < TM; ++a)
    for (uint c = 0u; c < TN; ++c) acc[a][c] = 0.0;

  for (uint k0 = 0u; k0 < k; k0 += BK) {
    // Global reads walk each operand's contiguous axis: x for X, and for W whichever of x and
    // the column its strides make contiguous.
    for (uint idx = tid; idx < BM * BK; idx += NT) {
      const uint r = idx / BK, kk = idx % BK, gr = r0 + r, gx = k0 + kk;
      Xs[kk * XS + r] = gr < rows && gx < k ? load_x(xb + gr * xrow + gx) : 0.0;
    }
    for (uint idx = tid; idx < BN * BK; idx += NT) {
      uint c, kk;
      if (wk == 1u) {
        c = idx / BK;
        kk = idx % BK;
      } else {
        kk = idx / BN;
        c = idx % BN;
      }
      const uint gc = c0 + c, gx = k0 + kk;
      Ws[kk * WS + c] = gc < n && gx < k ? load_w(wb + gc * wn + gx * wk) : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < BK; ++kk) {
      float xa[TM], wv[TN];
      for (uint a = 0u; a < TM; ++a) xa[a] = Xs[kk * XS + ty + a * RT];
      for (uint c = 0u; c < TN; ++c) wv[c] = Ws[kk * WS + tx + c * CTN];
      for (uint a = 0u; a < TM; ++a)
        for (uint c = 0u; c < TN; ++c) acc[a][c] += xa[a] * wv[c];
    }
    barrier();  // the tiles' readers are done before the next step overwrites them
  }

  for (uint a = 0u; a < TM; ++a) {
    const uint r = r0 + ty + a * RT;
    if (r >= rows) continue;
    for (uint c = 0u; c < TN; ++c) {
      const uint col = c0 + tx + c * CTN;
      if (col >= n) continue;
      const uint e = yb + r * yrow + col;
      if (DTYPE == DT_F32 || pc.s.y_f32 != 0) y1[e] = floatBitsToUint(acc[a][c]);
      else y2[e] = uint16_t(f32_to_storage16(acc[a][c], DTYPE));
    }
  }

  const uint pass = uint(pc.s.pass);
  if (tn != 0u || pass == 0u) return;
  for (uint idx = tid; idx < BM * pass; idx += NT) {
    const uint r = r0 + idx / pass, t = idx % pass;
    if (r >= rows) continue;
    const uint from = xb + r * xrow + k + t, to = yb + r * yrow + n + t;
    if (DTYPE == DT_F32) y1[to] = x1[from];
    else y2[to] = x2[from];
  }
}
