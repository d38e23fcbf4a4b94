// The per-step eviction on the CPU (variant "step"; contract: reference/kvcomp/eviction_step.h),
// the impl of every method with a decode step (h2o, tova; each method's <method>_cpu.cpp registers
// it): the backend's gqa decode over the slots (out and each head's log-sum-exp), then the slots'
// scores in parallel over blocks of slots (eviction_step_kernel.h), then per score row the
// smallest key by the tie rule. Every task is sequential inside, so no bit depends on the thread count.
#pragma once

#include <algorithm>
#include <cmath>

#include "../runtime/cpu_backend.h"
#include "eviction_step_kernel.h"
#include "reference/kvcomp/eviction_step_impl.h"

namespace attnbench::cpu {

class CpuEvictionStep final : public kvcomp::EvictionStepImpl {
 public:
  CpuEvictionStep() : EvictionStepImpl("cpu") {}

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    kernels_ = &cpu.kernels<step::Kernels>();
    attention_.prepare(c, backend, io);
    const kvcomp::StepParams s = kvcomp::step_params(c);
    const int64_t dp = (s.head_dim + kernels_->vector_width - 1) / kernels_->vector_width * kernels_->vector_width;
    q32_ = cpu.allocator().allocate(int64_t{s.batch} * s.q_heads * dp * sizeof(float), "step.q_f32");
    keys_ = cpu.allocator().allocate(kvcomp::step_score_rows(s) * s.slots * sizeof(float), "step.keys");
    p_ = {s, c.dtype, dp, q32_->ptr<float>(), io["k"].ptr(), io["pos"].ptr<int32_t>(),
          s.accumulate ? io["acc"].ptr<float>() : nullptr, attention_.lse().ptr<float>(), io["scores"].ptr<float>(),
          keys_->ptr<float>()};
    q_ = io["q"].ptr();
    evicted_ = io["evicted"].ptr<int32_t>();
  }

  void run() override {
    attention_.run();
    const kvcomp::StepParams& s = p_.s;
    kernels_->widen_queries(q_, p_.dtype, int64_t{s.batch} * s.q_heads, s.head_dim, p_.dp, s.scale, q32_->ptr<float>());
    const int64_t rows = kvcomp::step_score_rows(s), blocks = (s.slots + kSlotsPerTask - 1) / kSlotsPerTask;
    pool_->parallel_for(rows * blocks, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t i0 = t % blocks * kSlotsPerTask;
        kernels_->slot_scores(p_, t / blocks, i0, std::min<int64_t>(s.slots, i0 + kSlotsPerTask));
      }
    });
    for (int64_t r = 0; r < rows; ++r) {  // the smallest key, ties to the newer token
      const float* key = p_.keys + r * s.slots;
      const int32_t* pos = p_.pos + kvcomp::step_source_row(s, r) * s.slots;
      int32_t worst = 0;
      for (int32_t i = 1; i < s.slots; ++i)
        if (kvcomp::step_evicts_first(key[i], pos[i], key[worst], pos[worst])) worst = i;
      for (int64_t cr = kvcomp::step_source_row(s, r); cr < kvcomp::step_source_row(s, r) + (s.shared_scores ? s.kv_heads : 1); ++cr)
        evicted_[cr] = worst;
    }
  }

  std::string compute_ceiling() const override { return attention_.compute_ceiling(); }

 private:
  static constexpr int64_t kSlotsPerTask = 512;  // a multiple of every vector width

  kvcomp::StepAttention attention_;
  ThreadPool* pool_ = nullptr;
  const step::Kernels* kernels_ = nullptr;
  step::Problem p_{};
  const void* q_ = nullptr;
  int32_t* evicted_ = nullptr;
  BufferPtr q32_, keys_;
};

}  // namespace attnbench::cpu
