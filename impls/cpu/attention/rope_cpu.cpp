// rope on the CPU (variant "rotate"): the coefficient table of every token in parallel, then the
// rows of q and k in memory order in parallel (rope_kernel.h), vectorised per ISA.
#include <algorithm>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "rope_kernel.h"

namespace attnbench::cpu {
namespace {

class CpuRope final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    kernels_ = &cpu.kernels<rope_kernel::Kernels>();
    job_ = {rope::rope_params(c), c.dtype, io["q"].ptr(), io["k"].ptr(), io["positions"].ptr<int32_t>(),
            io["inv_freq"].ptr<float>(), io["q_rot"].ptr(), io["k_rot"].ptr()};
    scratch_stride_ = 2 * rope_kernel::kMaxHeadDim + 64;
    scratch_ = backend.allocator().allocate(scratch_stride_ * pool_->size() * sizeof(float), "rope.scratch");
    const int64_t tokens = int64_t{job_.s.batch} * job_.s.tokens;
    table_ = backend.allocator().allocate(std::max<int64_t>(1, tokens * 2 * job_.s.rotary_dim) * sizeof(float), "rope.table");
  }

  void run() override {
    const rope::RopeParams& s = job_.s;
    const int64_t tokens = int64_t{s.batch} * s.tokens, rows = tokens * (s.q_heads + s.kv_heads);
    float* table = table_->ptr<float>();
    float* scratch = scratch_->ptr<float>();
    if (s.rotary_dim > 0)
      pool_->parallel_for(tokens, [&](int64_t begin, int64_t end) { kernels_->coefficients(job_, begin, end, table); }, 64);
    pool_->parallel_for_slots(rows, [&](int64_t begin, int64_t end, unsigned slot) {
      kernels_->rotate(job_, table, begin, end, scratch + slot * scratch_stride_);
    }, 256);
  }

 private:
  ThreadPool* pool_ = nullptr;
  const rope_kernel::Kernels* kernels_ = nullptr;
  rope_kernel::Job job_{};
  size_t scratch_stride_ = 0;
  BufferPtr scratch_, table_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuRope, "rope", "cpu", "rotate");
