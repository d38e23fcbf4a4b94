// penalties on CUDA (variant "scatter"): penalties_cuda.cu, a CTA per row; nothing allocated.
#include <algorithm>
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/impl.h"
#include "penalties_launch.h"

namespace attnbench::cuda {
namespace {

class CudaPenalties final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const cudaDeviceProp& props = be.props();
    params_ = penalties::Params{decoding::penalties_params(c), io["logits"].ptr<float>(), io["history"].ptr<int32_t>(),
                                io["logits_out"].ptr<float>(), io["counts"].ptr<int32_t>()};
    ctas_ = row_grid(props, penalties::kThreads, params_.s.batch, penalties::kWaves);
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(penalties::launch(params_, ctas_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  penalties::Params params_{};
  int64_t ctas_ = 1;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaPenalties, "penalties", "cuda", "scatter");
