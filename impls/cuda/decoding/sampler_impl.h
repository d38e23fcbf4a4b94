// A sampling method's CUDA impl (variant "radix_select"): the decoding family's sampler stage on
// the device (sampler_stage.cuh: radix select of top-k's and top-p's thresholds on the logits'
// order keys, masses in 64-bit fixed point, a method's probability floor, then the race over the
// kept tokens) through the one sampling kernel (sampling_cuda.cu), registered under the method's
// name; its processor comes from the case through SamplerParams.
//
// Nothing is allocated: the stage's working memory is the CTA's shared memory. The grid is at
// most kWaves waves of resident CTAs; beyond that its CTAs take the rows in turn.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/rng.h"
#include "reference/decoding/sampler_common.h"
#include "sampling_launch.h"

namespace attnbench::cuda {

class SamplerImpl final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    if (c.dtype != DType::f32) return Support::no(cat(dtype_name(c.dtype), ": the logits are read as f32"));
    // As the CPU's: token indices stay exact in fp32 arithmetic elsewhere in the family.
    if (c.i64("vocab") >= (int64_t{1} << 24)) return Support::no("vocab < 2^24");
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const cudaDeviceProp& props = be.props();
    params_ = sampling::Params{};
    params_.s = decoding::sampler_params(c);
    params_.logits = io["logits"].ptr<float>();
    params_.kept = io["kept"].ptr<uint32_t>();
    params_.token = io[params_.s.gumbel_k > 0 ? "tokens" : "token"].ptr<int32_t>();
    params_.domain = kDomainDraws;
    // Arithmetic sampling: a CTA per sequence (its steps in order).
    const int64_t units = params_.s.arith_codes > 0 ? params_.s.rows / params_.s.arith_steps : params_.s.rows;
    ctas_ = row_grid(props, sampling::kThreads, units, sampling::kWaves);
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(sampling::launch(params_, ctas_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  sampling::Params params_{};
  int64_t ctas_ = 1;
};

}  // namespace attnbench::cuda

