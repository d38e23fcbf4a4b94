// jakiro on CUDA (variant "staged"): the CPU impl's schedule on the backend's stream, no host
// synchronisation: RMSNorm → experts_in → router (f32) → SwiGLU → experts_out (two problems) →
// mix (moe features, and the contrastive ones into the last k slots) → lm_head (f32, into
// draft_logits) → eagle2_tree's CUDA stage. The projections are projection.cu's kernel (each reads
// its weight once per row tile for all of the batch's rows), the three row passes jakiro_cuda.cu's.
#include <cstdint>

#include "../attention/elem_of.h"
#include "../attention/projection_launch.h"
#include "../attention/projection_limits.h"
#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "jakiro_launch.h"

namespace attnbench::cuda {
namespace {

class CudaJakiro final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    if (!elem_of(c.dtype)) return Support::no(cat(dtype_name(c.dtype), ": jakiro on cuda takes f32, f16 or bf16"));
    const decoding::JakiroParams p = decoding::jakiro_params(c);
    const decoding::JakiroProjections pr = decoding::jakiro_projections(p);
    const std::string why = projection_kernel::projection_limits("experts_in", pr.experts_in) +
                            projection_kernel::projection_limits("router", pr.router) +
                            projection_kernel::projection_limits("experts_out", pr.experts_out) +
                            projection_kernel::projection_limits("lm_head", pr.lm_head);
    if (!why.empty()) return Support::no(why);
    const uint64_t gate_up = scratch_bytes(p, c.dtype, 4);  // the largest workspace
    if (limits.max_buffer_bytes && gate_up > limits.max_buffer_bytes)
      return Support::no(cat("the experts' gate and up workspace of ", gate_up, " bytes exceeds the device's ",
                             limits.max_buffer_bytes));
    return stage_supports(decoding::jakiro_tree_case(c), "cuda", limits);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    elem_ = *elem_of(c.dtype);
    const decoding::JakiroParams p = decoding::jakiro_params(c);
    normed_ = be.allocator().allocate(scratch_bytes(p, c.dtype, 1), "jakiro.normed");
    gate_up_ = be.allocator().allocate(scratch_bytes(p, c.dtype, 4), "jakiro.gate_up");
    act_ = be.allocator().allocate(scratch_bytes(p, c.dtype, 2), "jakiro.act");
    expert_out_ = be.allocator().allocate(scratch_bytes(p, c.dtype, 2), "jakiro.expert_out");
    float* router = io["router_logits"].ptr<float>();
    void* features = io["features"].ptr();
    rows_ = jakiro::Params{p, elem_, io["hidden_states"].ptr(), io["norm_weight"].ptr(), normed_->ptr(), gate_up_->ptr(),
                           act_->ptr(), expert_out_->ptr(), router, features};
    const decoding::JakiroProjections pr = decoding::jakiro_projections(p);
    experts_in_ = {pr.experts_in, normed_->ptr(), io["w_in"].ptr(), nullptr, gate_up_->ptr()};
    router_ = {pr.router, normed_->ptr(), io["w_router"].ptr(), nullptr, router};
    experts_out_ = {pr.experts_out, act_->ptr(), io["w_down"].ptr(), nullptr, expert_out_->ptr()};
    head_ = {pr.lm_head, features, io["lm_head"].ptr(), nullptr, io["draft_logits"].ptr()};
    tree_ = prepare_stage(decoding::jakiro_tree_case(c), backend, io);
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(jakiro::norm_launch(rows_, stream_));
    ATTNBENCH_CUDA_CHECK(projection_kernel::project_launch(elem_, experts_in_, stream_));
    ATTNBENCH_CUDA_CHECK(projection_kernel::project_launch(elem_, router_, stream_));
    ATTNBENCH_CUDA_CHECK(jakiro::activate_launch(rows_, stream_));
    ATTNBENCH_CUDA_CHECK(projection_kernel::project_launch(elem_, experts_out_, stream_));
    ATTNBENCH_CUDA_CHECK(jakiro::mix_launch(rows_, stream_));
    ATTNBENCH_CUDA_CHECK(projection_kernel::project_launch(elem_, head_, stream_));
    tree_->run();
  }

 private:
  // A [batch·F, width·d] workspace in the storage type.
  static uint64_t scratch_bytes(const decoding::JakiroParams& p, DType t, int64_t width) {
    return static_cast<uint64_t>(int64_t{p.batch} * p.forward_rows * width * p.hidden) * dtype_size(t);
  }

  cudaStream_t stream_ = nullptr;
  attn::Elem elem_ = attn::Elem::f32;
  jakiro::Params rows_{};
  projection_kernel::Args experts_in_{}, router_{}, experts_out_{}, head_{};
  BufferPtr normed_, gate_up_, act_, expert_out_;
  std::unique_ptr<Impl> tree_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaJakiro, "jakiro", "cuda", "staged");
