// The projection stage's kernel on the CPU (reference/attention/projection_common.h), compiled per
// ISA. A task is one problem z, a block of at most kRowsPerTask rows and a range of output columns
// (all of them, unless the rows are too few to keep the pool busy: a draft's LM head). It widens the block's X
// rows to fp32 once, then, per panel of kPanel output columns, widens and lays out that panel of W
// as [k][kPanel] (a W-wide transpose when W is [n][k]) and runs a register tile of rows × panel
// vectors over k: each W panel is converted once and reused by every row of the block.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../runtime/isa.h"
#include "attnbench/dtype.h"
#include "reference/attention/projection_common.h"

namespace attnbench::cpu::project {

inline constexpr int64_t kRowsPerTask = 64;
inline constexpr int64_t kPanel = 64;  // output columns per W panel: 4 vectors at AVX-512

struct Job {
  projection::ProjectionParams s;
  DType dtype;
  const void* x;
  const void* w;
  void* y;
  const int32_t* kv_len;  // with s.limit_rows
};

// Floats of a task's fp32 Y row: n rounded up to whole panels.
inline int64_t padded_n(const projection::ProjectionParams& s) { return (int64_t{s.n} + kPanel - 1) / kPanel * kPanel; }

// Floats of per-thread scratch a task needs: X rows, one W panel, the fp32 Y rows.
inline size_t scratch_floats(const projection::ProjectionParams& s) {
  const int64_t kp = (int64_t{s.k} + 15) / 16 * 16, np = padded_n(s);
  return static_cast<size_t>(kRowsPerTask * kp + kp * kPanel + kRowsPerTask * np + 16 * kp);
}

// projection_amx.cpp: the same task with the products on AMX tiles (bf16, where CpuBackend::amx()
// allows), and the floats of scratch it needs.
void rows_amx(const Job& job, int64_t z, int64_t r0, int64_t r1, int64_t c0, int64_t c1, float* scratch);
size_t amx_scratch_floats(const projection::ProjectionParams& s);

struct Kernels {
  // Rows [r0, r1) of problem z (z = o·inner + i), output columns [c0, c1) (c0 a multiple of
  // kPanel; the pass-through tail with the last columns).
  void (*rows)(const Job& job, int64_t z, int64_t r0, int64_t r1, int64_t c0, int64_t c1, float* scratch);
};

}  // namespace attnbench::cpu::project

namespace attnbench::cpu {
ATTNBENCH_CPU_KERNEL_TABLE(project::Kernels);
}
