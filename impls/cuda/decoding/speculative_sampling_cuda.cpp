// speculative_sampling on CUDA (variant "race"): the chain verification stage
// (chain_verify_stage.h), every row verifying all its drafts; verification and the exponential race
// on the device (speculative_sampling_cuda.cu), Philox draws bit-identical to the CPU's.
#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "chain_verify_stage.h"
#include "reference/decoding/speculative_sampling_common.h"

namespace attnbench::cuda {
namespace {

class CudaSpeculativeSampling final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    // Every schema-valid f32 case: rows ≤ 10^7 and V ≤ 2^20 keep the grid (rows·spans·lanes / 256
    // CTAs, spans·rows about max(rows, warp slots)) and every index far inside their types.
    if (c.dtype != DType::f32) return Support::no(cat(dtype_name(c.dtype), ": the probabilities are read as f32"));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    stage_.prepare(decoding::speculative_params(c), be, io);
  }

  void run() override {
    check_not_lost();
    stage_.run(nullptr, stream_);
  }

 private:
  cudaStream_t stream_ = nullptr;
  ChainVerifyStage stage_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaSpeculativeSampling, "speculative_sampling", "cuda", "race");
