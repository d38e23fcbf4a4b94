// specdecpp on CUDA (variant "race", the verification's): the acceptance head over every (row,
// step) and the stopping rule per row (specdecpp_cuda.cu), then the chain verification stage
// (chain_verify_stage.h) reading the draft_len output as its lengths, all on the backend's stream:
// three launches (four when the race splits rows into spans), no host synchronisation.
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "chain_verify_stage.h"
#include "reference/decoding/specdecpp_common.h"
#include "specdecpp_launch.h"

namespace attnbench::cuda {
namespace {

class CudaSpecDecPP final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    // Every schema-valid f32 case: batch·draft_len ≤ 2^22 CTAs for the head, rows and V as
    // speculative_sampling's.
    if (c.dtype != DType::f32) return Support::no(cat(dtype_name(c.dtype), ": the probabilities are read as f32"));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    specdecpp::Params& p = params_;
    p = specdecpp::Params{};
    p.s = decoding::specdecpp_params(c);
    p.target = io["target_probs"].ptr<float>();
    p.draft = io["draft_probs"].ptr<float>();
    if (!p.s.oracle) {
      p.hidden = io["hidden"].ptr<float>();
      p.weight = io["acc_weight"].ptr<float>();
      p.bias = io["acc_bias"].ptr<float>();
    }
    p.prob = io["accept_prob"].ptr<float>();
    p.len = io["draft_len"].ptr<int32_t>();
    stage_.prepare(decoding::specdecpp_chain_params(c), be, io);
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(specdecpp::head_stop_launch(params_, stream_));
    stage_.run(params_.len, stream_);
  }

 private:
  cudaStream_t stream_ = nullptr;
  specdecpp::Params params_{};
  ChainVerifyStage stage_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaSpecDecPP, "specdecpp", "cuda", "race");
