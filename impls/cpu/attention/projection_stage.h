// The projection stage on the CPU (reference/attention/projection_common.h): tasks of one problem
// and up to 64 rows on the backend's pool (and a range of columns when those are fewer than four
// tasks a thread: a few rows by many columns, as an LM head over a draft's rows), the kernel per ISA (projection_kernel.h). W must be
// [n][k] or [k][n] (w_k = 1 or w_n = 1), the two layouts mla's stages use.
#pragma once

#include "../runtime/cpu_backend.h"
#include "projection_kernel.h"

namespace attnbench::cpu::project {

class ProjectionStage {
 public:
  void prepare(const projection::ProjectionParams& s, DType dtype, const void* x, const void* w, void* y,
               const int32_t* kv_len, CpuBackend& cpu);
  void run();

 private:
  ThreadPool* pool_ = nullptr;
  const Kernels* kernels_ = nullptr;
  Job job_{};
  int64_t blocks_ = 0;  // row blocks per problem
  int64_t col_blocks_ = 1, col_block_ = 0;  // column ranges per row block, and their width
  size_t scratch_stride_ = 0;
  BufferPtr scratch_;
};

}  // namespace attnbench::cpu::project
