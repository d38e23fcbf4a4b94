// rope on the CPU (variant "rotate"): tokens in parallel on the backend's pool, each token's heads
// rotated with its coefficients formed once (rope_kernel.h), vectorised per ISA.
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
    scratch_stride_ = 4 * rope_kernel::kMaxHeadDim + 64;
    scratch_ = backend.allocator().allocate(scratch_stride_ * pool_->size() * sizeof(float), "rope.scratch");
  }

  void run() override {
    const int64_t tokens = job_.s.tokens;
    float* scratch = scratch_->ptr<float>();
    pool_->parallel_for_slots(int64_t{job_.s.batch} * tokens, [&](int64_t begin, int64_t end, unsigned slot) {
      for (int64_t bt = begin; bt < end; ++bt) kernels_->token(job_, bt / tokens, bt % tokens, scratch + slot * scratch_stride_);
    });
  }

 private:
  ThreadPool* pool_ = nullptr;
  const rope_kernel::Kernels* kernels_ = nullptr;
  rope_kernel::Job job_{};
  size_t scratch_stride_ = 0;
  BufferPtr scratch_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuRope, "rope", "cpu", "rotate");
