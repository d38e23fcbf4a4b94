// mla on CUDA: the stages of mla_stages() (reference/attention/mla_common.h) in order on the
// backend's stream, over workspaces from the backend's allocator. All the math of each form is in
// mla_stages; this file only binds buffers:
//   naive     decompress_k (latent → K), decompress_v (latent → V): projection.cu;
//             attention (q, K, V → O, LSE): head_dim nope + rope, v_head_dim v_dim
//   absorbed  absorb_q (q → q̃): projection.cu; attention (q̃, latent, latent → u, LSE), reading V
//             inside the latent rows (v_stride rank + rope); project_out (u → O): projection.cu
// The variants differ in the attention step (attention_stage.h):
//   mma      tensor cores, f16/bf16: naive's 192/128 on the 256-wide tiles (prefill_mma,
//            decode_mma), absorbed's 576/512 on latent_mma (FlashMLA's decode)
//   general  CUDA cores, f32/f16/bf16: the general kernel (its 1024 instance at 576/512)
#include <algorithm>
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attention_stage.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "elem_of.h"
#include "projection_launch.h"
#include "projection_limits.h"
#include "reference/attention/mla_common.h"

namespace attnbench::cuda {
namespace {

using projection_kernel::projection_limits;

template <AttentionVariant V>
class CudaMla final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    if (!elem_of(c.dtype)) return Support::no(cat(dtype_name(c.dtype), ": mla on cuda takes f32, f16 or bf16"));
    const mla::MlaParams m = mla::mla_params(c);
    const mla::MlaStages st = mla::mla_stages(m);
    const size_t es = dtype_size(c.dtype);
    for (const int64_t n : {st.k_elements, st.v_elements, st.qa_elements, st.u_elements})
      if (limits.max_buffer_bytes && static_cast<uint64_t>(n) * es > limits.max_buffer_bytes)
        return Support::no(cat("a workspace of ", static_cast<uint64_t>(n) * es, " bytes exceeds the device's ",
                               limits.max_buffer_bytes));
    const std::string why = m.absorbed ? projection_limits("absorb_q", st.absorb_q) + projection_limits("project_out", st.project_out)
                                       : projection_limits("decompress_k", st.decompress_k) +
                                             projection_limits("decompress_v", st.decompress_v);
    if (!why.empty()) return Support::no(why);
    const Support a = AttentionStage::supports(V, st.attention, c.dtype, c.phase == "decode", limits);
    if (!a.ok) return Support::no(cat("the attention step: ", a.reason));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    elem_ = *elem_of(c.dtype);
    const mla::MlaParams m = mla::mla_params(c);
    const mla::MlaStages st = mla::mla_stages(m);
    absorbed_ = m.absorbed;
    const size_t es = dtype_size(c.dtype);
    const auto workspace = [&](int64_t elements, const char* name) {
      return be.allocator().allocate(std::max<size_t>(4, static_cast<size_t>(elements) * es), name);
    };
    const void* q = io["q"].ptr();
    const void* latent = io["kv_latent"].ptr();
    const void* w_uk = io["w_uk"].ptr();
    const void* w_uv = io["w_uv"].ptr();
    const int32_t* kv_len = io["kv_len"].ptr<int32_t>();
    AttentionBuffers a;
    a.kv_len = kv_len;
    a.lse = io["LSE"].ptr<float>();
    if (!absorbed_) {
      ws_a_ = workspace(st.k_elements, "mla.k");
      ws_b_ = workspace(st.v_elements, "mla.v");
      before_[0] = {st.decompress_k, latent, w_uk, kv_len, ws_a_->ptr()};
      before_[1] = {st.decompress_v, latent, w_uv, kv_len, ws_b_->ptr()};
      a.q = q;
      a.k = ws_a_->ptr();
      a.v = ws_b_->ptr();
      a.o = io["O"].ptr();
      add_rope_buffers(a, st.attention, io);  // PreRoPE: the stage rotates q and the decompressed keys
    } else {
      ws_a_ = workspace(st.qa_elements, "mla.q_absorbed");
      ws_b_ = workspace(st.u_elements, "mla.u");
      before_[0] = {st.absorb_q, q, w_uk, kv_len, ws_a_->ptr()};
      after_ = {st.project_out, ws_b_->ptr(), w_uv, kv_len, io["O"].ptr()};
      a.q = ws_a_->ptr();
      a.k = latent;
      a.v = latent;  // the value is the first rank dims of the latent row (v_stride = rank + rope)
      a.o = ws_b_->ptr();
    }
    attention_.prepare(V, st.attention, c.dtype, c.phase == "decode", be, a, "mla.attention");
  }

  std::string compute_ceiling() const override { return attention_.compute_ceiling(); }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(projection_kernel::project_launch(elem_, before_[0], stream_));
    if (!absorbed_) ATTNBENCH_CUDA_CHECK(projection_kernel::project_launch(elem_, before_[1], stream_));
    attention_.enqueue(stream_);
    if (absorbed_) ATTNBENCH_CUDA_CHECK(projection_kernel::project_launch(elem_, after_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  attn::Elem elem_ = attn::Elem::f32;
  bool absorbed_ = false;
  projection_kernel::Args before_[2]{}, after_{};  // naive: decompress_k, decompress_v; absorbed: absorb_q, project_out
  AttentionStage attention_;
  BufferPtr ws_a_, ws_b_;  // naive: K, V; absorbed: q̃, u
};

using CudaMlaMma = CudaMla<AttentionVariant::mma>;
using CudaMlaGeneral = CudaMla<AttentionVariant::general>;

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaMlaMma, "mla", "cuda", "mma");
ATTNBENCH_IMPL(attnbench::cuda::CudaMlaGeneral, "mla", "cuda", "general");
