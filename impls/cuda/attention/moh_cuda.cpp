// moh on CUDA: the stages of moh_stages() (reference/attention/moh_common.h) in order on the
// backend's stream:
//   router_logits  (learned only) x·W_routerᵀ into an f32 workspace: projection.cu with y_f32
//   router         per token: scores, kept heads, gates and heads_idx: moh_router.cu
//   attention      gqa's attention with head_sparse, gated by the router's gates: the shared stage
//                  (attention_stage.h), which compacts each KV head's running rows and computes
//                  only those, on tensor cores (variant mma, f16/bf16) or CUDA cores (general)
#include <algorithm>
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attention_stage.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "elem_of.h"
#include "moh_router_launch.h"
#include "projection_launch.h"
#include "projection_limits.h"
#include "reference/attention/moh_common.h"

namespace attnbench::cuda {
namespace {

template <AttentionVariant V>
class CudaMoh final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    if (!elem_of(c.dtype)) return Support::no(cat(dtype_name(c.dtype), ": moh on cuda takes f32, f16 or bf16"));
    const moh::MohStages st = moh::moh_stages(c);
    if (st.router.learned) {
      const uint64_t bytes = static_cast<uint64_t>(st.logit_elements) * sizeof(float);
      if (limits.max_buffer_bytes && bytes > limits.max_buffer_bytes)
        return Support::no(cat("the router logits' workspace of ", bytes, " bytes exceeds the device's ",
                               limits.max_buffer_bytes));
      const std::string why = projection_kernel::projection_limits("router_logits", st.router_logits);
      if (!why.empty()) return Support::no(why);
    }
    const uint64_t router_smem = moh_router::smem_bytes(st.router);
    const uint64_t smem_cap = std::min<uint64_t>(moh_router::kMaxSmem, limits.shared_mem_bytes);
    if (router_smem > smem_cap)
      return Support::no(cat("the router: needs ", router_smem, " bytes of shared memory per block (a score and a flag per "
                             "head); it may take ", smem_cap));
    if (int64_t{st.router.batch} * st.router.q_len > moh_router::kMaxTokens)
      return Support::no(cat("the router: ", int64_t{st.router.batch} * st.router.q_len, " tokens exceed its grid"));
    const Support a = AttentionStage::supports(V, st.attention, c.dtype, c.phase == "decode", limits);
    if (!a.ok) return Support::no(cat("the attention step: ", a.reason));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    elem_ = *elem_of(c.dtype);
    const moh::MohStages st = moh::moh_stages(c);
    float* gates = io["gates"].ptr<float>();
    router_ = {st.router, io["q"].ptr(), nullptr, gates, io["heads_idx"].ptr<int32_t>()};
    logits_.reset();
    if (st.router.learned) {
      logits_ = be.allocator().allocate(static_cast<size_t>(st.logit_elements) * sizeof(float), "moh.logits");
      router_logits_ = {st.router_logits, io["x"].ptr(), io["w_router"].ptr(), nullptr, logits_->ptr()};
      router_.logits = logits_->ptr<float>();
    }
    const attention::AttentionParams& s = st.attention;
    attention_.prepare(V, s, c.dtype, c.phase == "decode", be, case_buffers(s, io, gates), "moh.attention");
  }

  std::string compute_ceiling() const override { return attention_.compute_ceiling(); }

  void run() override {
    check_not_lost();
    if (router_.logits) ATTNBENCH_CUDA_CHECK(projection_kernel::project_launch(elem_, router_logits_, stream_));
    ATTNBENCH_CUDA_CHECK(moh_router::route_launch(elem_, router_, stream_));
    attention_.enqueue(stream_);
  }

 private:
  cudaStream_t stream_ = nullptr;
  attn::Elem elem_ = attn::Elem::f32;
  projection_kernel::Args router_logits_{};  // with the learned router
  moh_router::Args router_{};
  AttentionStage attention_;
  BufferPtr logits_;  // the learned router's [batch·q_len][heads + 2] f32
};

using CudaMohMma = CudaMoh<AttentionVariant::mma>;
using CudaMohGeneral = CudaMoh<AttentionVariant::general>;

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaMohMma, "moh", "cuda", "mma");
ATTNBENCH_IMPL(attnbench::cuda::CudaMohGeneral, "moh", "cuda", "general");
