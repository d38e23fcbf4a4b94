// zeromerge_decode on the CPU (variant "rows"): the cache copied into the outputs, then every
// row's steps (zeromerge_kernel.h) as one task per (sequence, KV head), the rows in parallel:
// rows never exchange data between steps (the ring pointer is a function of the step), so no
// step waits on another row and no bit depends on the thread count.
#include <cstring>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "zeromerge_kernel.h"

namespace attnbench::cpu {
namespace {

class CpuZeromergeDecode final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    kernels_ = &cpu.kernels<zeromerge::Kernels>();
    const kvcomp::ZeromergeParams s = kvcomp::zeromerge_params(c);
    const int64_t W = kernels_->vector_width, dp = (s.head_dim + W - 1) / W * W;
    p_ = {s, c.dtype, dp, io["q_new"].ptr(), io["k_new"].ptr(), io["v_new"].ptr(), io["k_final"].ptr(), io["v_final"].ptr(),
          io["w_final"].ptr<float>(), io["s_final"].ptr<float>(), io["out"].ptr(), io["merged_from"].ptr<int32_t>(),
          io["merged_into"].ptr<int32_t>()};
    for (const char* name : {"k", "v", "w", "s"}) {
      const std::string from = std::string(name) + "_cache", to = std::string(name) + "_final";
      copies_.push_back({io[from].ptr(), io[to].ptr(), io[from].bytes()});
    }
    scratch_stride_ = zeromerge::scratch_floats(p_);
    scratch_ = cpu.allocator().allocate(scratch_stride_ * pool_->size() * sizeof(float), "zeromerge.scratch");
  }

  void run() override {
    for (const Copy& cp : copies_) std::memcpy(cp.to, cp.from, cp.bytes);  // the steps update the cache in place
    float* scratch = scratch_->ptr<float>();
    pool_->parallel_for_slots(int64_t{p_.s.batch} * p_.s.kv_heads, [&](int64_t begin, int64_t end, unsigned slot) {
      for (int64_t r = begin; r < end; ++r) kernels_->row_steps(p_, r, scratch + slot * scratch_stride_);
    });
  }

 private:
  struct Copy {
    const void* from;
    void* to;
    size_t bytes;
  };
  ThreadPool* pool_ = nullptr;
  const zeromerge::Kernels* kernels_ = nullptr;
  zeromerge::Problem p_{};
  std::vector<Copy> copies_;
  size_t scratch_stride_ = 0;
  BufferPtr scratch_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuZeromergeDecode, "zeromerge_decode", "cpu", "rows");
