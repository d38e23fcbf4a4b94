// The projection stage on the CPU (projection_stage.h).
#include "projection_stage.h"

#include <algorithm>

#include "attnbench/error.h"

namespace attnbench::cpu::project {

void ProjectionStage::prepare(const projection::ProjectionParams& s, DType dtype, const void* x, const void* w, void* y,
                              const int32_t* kv_len, CpuBackend& cpu) {
  ATTNBENCH_ASSERT(s.w_n == 1 || s.w_k == 1, "projection: W must be [n][k] or [k][n]");
  pool_ = &cpu.pool();
  rows_ = cpu.amx() && dtype == DType::bf16 ? &rows_amx : cpu.kernels<Kernels>().rows;
  job_ = {s, dtype, x, w, y, kv_len};
  blocks_ = (int64_t{s.m} + kRowsPerTask - 1) / kRowsPerTask;
  // Columns split only where rows cannot fill the pool: each range re-reads its block's X rows,
  // never a panel of W twice.
  const int64_t panels = (int64_t{s.n} + kPanel - 1) / kPanel, tasks = int64_t{s.outer} * s.inner * blocks_;
  const int64_t want = 4 * static_cast<int64_t>(pool_->size());
  col_blocks_ = tasks >= want ? 1 : std::min(panels, (want + tasks - 1) / tasks);
  col_block_ = (panels + col_blocks_ - 1) / col_blocks_ * kPanel;
  col_blocks_ = (int64_t{s.n} + col_block_ - 1) / col_block_;
  scratch_stride_ = amx() ? amx_scratch_floats(s) : scratch_floats(s);
  scratch_ = cpu.allocator().allocate(scratch_stride_ * pool_->size() * sizeof(float), "projection.scratch");
}

void ProjectionStage::run() {
  const projection::ProjectionParams& s = job_.s;
  float* scratch = scratch_->ptr<float>();
  pool_->parallel_for_slots(int64_t{s.outer} * s.inner * blocks_ * col_blocks_, [&](int64_t begin, int64_t end, unsigned slot) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t cb = t % col_blocks_, rb = t / col_blocks_;
      const int64_t z = rb / blocks_, r0 = (rb % blocks_) * kRowsPerTask;
      const int64_t rows = projection::rows_of(s, job_.kv_len, z / s.inner);
      const int64_t c0 = cb * col_block_, c1 = std::min<int64_t>(s.n, c0 + col_block_);
      if (r0 < rows) rows_(job_, z, r0, std::min(rows, r0 + kRowsPerTask), c0, c1, scratch + slot * scratch_stride_);
    }
  });
}

}  // namespace attnbench::cpu::project
