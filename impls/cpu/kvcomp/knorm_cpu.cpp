// knorm on the CPU (variant "norms"): the key norms of every row in parallel (knorm_kernel.h),
// then the family's selection and gather (scored_selection_cpu.h).
#include "knorm_kernel.h"
#include "scored_selection_cpu.h"

namespace attnbench::cpu {
namespace {

class CpuKnorm final : public CpuScoredSelection {
  void prepare_scores(const Case& c, CpuBackend& cpu, const IoBuffers& io) override {
    kernels_ = &cpu.kernels<knorm::Kernels>();
    k_ = io["k"].ptr();
    dtype_ = c.dtype;
  }

  void score() override {
    const kvcomp::SelectionParams& s = selection();
    const size_t key_bytes = static_cast<size_t>(s.head_dim) * s.elem_bytes;
    pool().parallel_for(kvcomp::cache_rows(s), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row)  // the row's candidates: keys sinks .. sinks + C − 1
        kernels_->scores(static_cast<const char*>(k_) + (row * s.kv_len + s.sinks) * key_bytes, dtype_, s.candidates,
                         s.head_dim, scores() + row * s.candidates);
    });
  }

  const knorm::Kernels* kernels_ = nullptr;
  const void* k_ = nullptr;
  DType dtype_ = DType::f32;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuKnorm, "knorm", "cpu", "norms");
