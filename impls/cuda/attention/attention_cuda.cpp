// mha, mqa, gqa, swa, cog and the decode primitives gather_decode, bias_decode and tree_decode on CUDA: two
// variants, each one attention step over the case's own buffers. The kernels, their choice and
// limits live in the shared stage (attention_stage.h, attention_stage.cpp), which mla's impl
// prepares over its workspaces too.
//
//   mma      tensor cores, f16/bf16, key and value widths up to 256 in multiples of 8 (mha, mqa,
//            gqa, swa, gather_decode, bias_decode, tree_decode), the patterns but cog's signed weights
//   general  CUDA cores, f32/f16/bf16, head_dim up to 1024, every pattern (window, sinks,
//            soft-cap, ALiBi, signed weights, gathered keys, key bias, tree mask)
#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attention_stage.h"
#include "attnbench/impl.h"
#include "reference/attention/attention_common.h"

namespace attnbench::cuda {
namespace {

template <AttentionVariant V>
class CudaAttention final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    return AttentionStage::supports(V, attention::attention_params(c), c.dtype, c.phase == "decode", limits);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const attention::AttentionParams s = attention::attention_params(c);
    stage_.prepare(V, s, c.dtype, c.phase == "decode", be, case_buffers(s, io));
  }

  std::string compute_ceiling() const override { return stage_.compute_ceiling(); }

  void run() override {
    check_not_lost();
    stage_.enqueue(stream_);
  }

 private:
  cudaStream_t stream_ = nullptr;
  AttentionStage stage_;
};

using CudaAttentionMma = CudaAttention<AttentionVariant::mma>;
using CudaAttentionGeneral = CudaAttention<AttentionVariant::general>;

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionMma, "mha", "cuda", "mma");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionMma, "mqa", "cuda", "mma");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionMma, "gqa", "cuda", "mma");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionMma, "swa", "cuda", "mma");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionMma, "gather_decode", "cuda", "mma");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionMma, "bias_decode", "cuda", "mma");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionMma, "tree_decode", "cuda", "mma");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionGeneral, "mha", "cuda", "general");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionGeneral, "mqa", "cuda", "general");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionGeneral, "gqa", "cuda", "general");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionGeneral, "swa", "cuda", "general");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionGeneral, "cog", "cuda", "general");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionGeneral, "gather_decode", "cuda", "general");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionGeneral, "bias_decode", "cuda", "general");
ATTNBENCH_IMPL(attnbench::cuda::CudaAttentionGeneral, "tree_decode", "cuda", "general");
