// rope on CUDA (variant "rotate"): rope.cu, one CTA per token.
#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "elem_of.h"
#include "rope_launch.h"

namespace attnbench::cuda {
namespace {

class CudaRope final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    if (!elem_of(c.dtype)) return Support::no(cat(dtype_name(c.dtype), ": rope on cuda takes f32, f16 or bf16"));
    const rope::RopeParams s = rope::rope_params(c);
    if (int64_t{s.batch} * s.tokens >= (int64_t{1} << 31)) return Support::no("more than 2^31 − 1 tokens: one CTA each");
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    elem_ = *elem_of(c.dtype);
    args_ = {rope::rope_params(c), io["q"].ptr(), io["k"].ptr(), io["positions"].ptr<int32_t>(), io["inv_freq"].ptr<float>(),
             io["q_rot"].ptr(), io["k_rot"].ptr()};
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(rope_kernel::rotate_launch(elem_, args_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  attn::Elem elem_ = attn::Elem::f32;
  rope_kernel::Args args_{};
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaRope, "rope", "cuda", "rotate");
