// frspec on CUDA (variant "subset_head"): the draft head over the subset's rows, q and the drafts
// on the device (frspec_cuda.cu), then speculative_sampling's CUDA stage for the verification.
// The plan, fixed in prepare(): the head's CTAs (enough warps to cover the subset's rows, at most
// a few CTAs per SM, grid-stride beyond), the race's threads per (row, position) (about 64 tokens
// per thread, 32..256).
#include <algorithm>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "frspec_launch.h"

namespace attnbench::cuda {
namespace {

class CudaFrspec final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    return stage_supports(decoding::frspec_verification_case(c), "cuda", limits);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const decoding::FrspecParams s = decoding::frspec_params(c);
    const int64_t H = int64_t{s.prob_rows} * s.draft_len;
    frspec::Params& p = params_;
    p = frspec::Params{};
    p.s = s;
    p.elem = c.dtype == DType::f32 ? frspec::Elem::f32 : c.dtype == DType::f16 ? frspec::Elem::f16 : frspec::Elem::bf16;
    p.head = io["lm_head"].ptr();
    p.hidden = io["hidden"].ptr();
    p.subset = io["subset_ids"].ptr<int32_t>();
    p.logits = io["draft_logits"].ptr<float>();
    p.probs = io["draft_probs"].ptr<float>();
    p.ids = io["draft_token_ids"].ptr<int32_t>();
    p.domain = kDomainDraws;
    int threads = 32;
    while (threads < 256 && threads * 64 < s.subset) threads *= 2;
    p.race_threads = threads;
    const int sms = be.props().multiProcessorCount;
    ctas_ = static_cast<int>(std::clamp<int64_t>((s.subset + frspec::kHeadWarps - 1) / frspec::kHeadWarps, 1, int64_t{sms} * 8));

    q_full_ = be.allocator().allocate(static_cast<size_t>(H) * s.vocab * sizeof(float), "frspec.draft_probs_full");
    ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(q_full_->ptr(), 0, q_full_->bytes(), stream_));  // zero outside the subset, for good
    p.probs_full = q_full_->ptr<float>();
    top_ = be.allocator().allocate(static_cast<size_t>(H) * sizeof(int32_t), "frspec.top");
    p.top = top_->ptr<int32_t>();

    // The verification reads the target and the drafts, and q on the whole vocabulary.
    verify_ = prepare_stage(decoding::frspec_verification_case(c), backend, io, {{"draft_probs", q_full_.get()}});
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(frspec::head_launch(params_, ctas_, stream_));
    ATTNBENCH_CUDA_CHECK(frspec::softmax_launch(params_, stream_));
    ATTNBENCH_CUDA_CHECK(frspec::draft_launch(params_, stream_));
    verify_->run();
  }

 private:
  cudaStream_t stream_ = nullptr;
  frspec::Params params_{};
  int ctas_ = 1;
  BufferPtr q_full_, top_;
  std::unique_ptr<Impl> verify_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaFrspec, "frspec", "cuda", "subset_head");
