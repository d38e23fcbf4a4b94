// The projection stage on the CPU (reference/attention/projection_common.h): tasks of one problem
// and up to 64 rows on the backend's pool (and a range of columns when those are fewer than four
// tasks a thread: a few rows by many columns, as an LM head over a draft's rows), the kernel per
// ISA (projection_kernel.h), or in bf16 on AMX tiles where the CPU has them (projection_amx.cpp).
// W must be [n][k] or [k][n] (w_k = 1 or w_n = 1), the two layouts mla's stages use.
#pragma once

#include "../runtime/cpu_backend.h"
#include "projection_kernel.h"

namespace attnbench::cpu::project {

class ProjectionStage {
 public:
  void prepare(const projection::ProjectionParams& s, DType dtype, const void* x, const void* w, void* y,
               const int32_t* kv_len, CpuBackend& cpu);
  void run();
  // Whether the products run on AMX tiles (bf16 with cpu.amx on): the compute ceiling of a row
  // they dominate.
  bool amx() const { return rows_ == &rows_amx; }

 private:
  ThreadPool* pool_ = nullptr;
  decltype(Kernels::rows) rows_ = nullptr;
  Job job_{};
  int64_t blocks_ = 0;  // row blocks per problem
  int64_t col_blocks_ = 1, col_block_ = 0;  // column ranges per row block, and their width
  size_t scratch_stride_ = 0;
  BufferPtr scratch_;
};

}  // namespace attnbench::cpu::project
