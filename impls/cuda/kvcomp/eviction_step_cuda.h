// The per-step eviction on CUDA (variant "step"; contract: reference/kvcomp/eviction_step.h), the
// impl of every method with a decode step (h2o, tova; each method's <method>_cuda.cpp registers
// it): the backend's gqa decode over the slots (out and each head's log-sum-exp), then the slots'
// scores and the eviction per score row (eviction_step_launch.h), on the backend's stream.
#pragma once

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "eviction_step_launch.h"
#include "reference/kvcomp/eviction_step_impl.h"

namespace attnbench::cuda {

class CudaEvictionStep final : public kvcomp::EvictionStepImpl {
 public:
  CudaEvictionStep() : EvictionStepImpl("cuda") {}

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_cuda(backend);
    attention_.prepare(c, backend, io);
    elem_ = *elem_of(c.dtype);
    const kvcomp::StepParams s = kvcomp::step_params(c);
    keys_ = be_->allocator().allocate(kvcomp::step_score_rows(s) * s.slots * sizeof(float), "step.keys");
    const int per_word = 16 / static_cast<int>(dtype_size(c.dtype)), words = (s.head_dim + per_word - 1) / per_word;
    int lanes = 1;
    while (lanes < 32 && lanes < words) lanes *= 2;
    args_ = {s, io["q"].ptr(), io["k"].ptr(), attention_.lse().ptr<float>(), io["pos"].ptr<int32_t>(),
             s.accumulate ? io["acc"].ptr<float>() : nullptr, io["scores"].ptr<float>(), keys_->ptr<float>(),
             io["evicted"].ptr<int32_t>(), lanes};
  }

  void run() override {
    attention_.run();
    ATTNBENCH_CUDA_CHECK(step::scores_launch(elem_, args_, be_->stream()));
    ATTNBENCH_CUDA_CHECK(step::evict_launch(args_, be_->stream()));
  }

  std::string compute_ceiling() const override { return attention_.compute_ceiling(); }

 protected:
  std::string unsupported(const Case& c, const DeviceLimits&) const override {
    const kvcomp::StepParams s = kvcomp::step_params(c);
    if (!elem_of(c.dtype)) return cat(dtype_name(c.dtype), ": the step on cuda takes f32, f16 or bf16");
    if (s.head_dim > 512) return cat("head_dim=", s.head_dim, " is above the step kernel's 512");
    if (kvcomp::step_score_rows(s) * s.slots * 32 / step::kThreads >= (int64_t{1} << 31))
      return "the scores kernel needs more than 2^31 − 1 CTAs";
    return {};
  }

 private:
  CudaBackend* be_ = nullptr;
  kvcomp::StepAttention attention_;
  attn::Elem elem_ = attn::Elem::f32;
  step::Args args_{};
  BufferPtr keys_;
};

}  // namespace attnbench::cuda
