// jakiro on the CPU (variant "staged"): the draft layer over every forward row of the batch at once,
// as four projections (projection_stage.h: the experts' gate and up, the router, the experts' down,
// the LM head) with three row passes between them on the backend's pool (RMSNorm, the SwiGLU
// activation, the routed mix), then eagle2_tree's CPU stage over the logits. The projections are
// the time: they read every weight once for all rows (rows ≤ 64 a task) and split the LM head's
// columns across the pool.
#include <algorithm>
#include <cmath>
#include <vector>

#include "../attention/projection_stage.h"
#include "../runtime/cpu_backend.h"
#include "../runtime/elements.h"
#include "../runtime/isa.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "reference/decoding/jakiro_common.h"

namespace attnbench::cpu {
namespace {

class CpuJakiro final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    return stage_supports(decoding::jakiro_tree_case(c), "cpu", limits);
  }

  // The four products dominate: the tiles' rate where they run on them (bf16 with cpu.amx on).
  std::string compute_ceiling() const override { return head_.amx() ? kAmxBf16Ceiling : ""; }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    p_ = decoding::jakiro_params(c);
    t_ = c.dtype;
    const size_t es = dtype_size(t_), rows = static_cast<size_t>(p_.batch) * p_.forward_rows, d = static_cast<size_t>(p_.hidden);
    normed_ = cpu.allocator().allocate(rows * d * es, "jakiro.normed");
    gate_up_ = cpu.allocator().allocate(rows * 4 * d * es, "jakiro.gate_up");
    act_ = cpu.allocator().allocate(rows * 2 * d * es, "jakiro.act");
    expert_out_ = cpu.allocator().allocate(rows * 2 * d * es, "jakiro.expert_out");
    x_ = io["hidden_states"].ptr();
    g_ = io["norm_weight"].ptr();
    router_ = io["router_logits"].ptr<float>();
    features_ = io["features"].ptr();
    const decoding::JakiroProjections pr = decoding::jakiro_projections(p_);
    experts_in_.prepare(pr.experts_in, t_, normed_->ptr(), io["w_in"].ptr(), gate_up_->ptr(), nullptr, cpu);
    router_stage_.prepare(pr.router, t_, normed_->ptr(), io["w_router"].ptr(), router_, nullptr, cpu);
    experts_out_.prepare(pr.experts_out, t_, act_->ptr(), io["w_down"].ptr(), expert_out_->ptr(), nullptr, cpu);
    head_.prepare(pr.lm_head, t_, features_, io["lm_head"].ptr(), io["draft_logits"].ptr(), nullptr, cpu);
    tree_ = prepare_stage(decoding::jakiro_tree_case(c), backend, io);
  }

  void run() override {
    norm();
    experts_in_.run();
    router_stage_.run();
    activate();
    experts_out_.run();
    mix();
    head_.run();
    tree_->run();
  }

 private:
  int64_t rows() const { return int64_t{p_.batch} * p_.forward_rows; }

  // n = x·g / sqrt(mean(x²) + ε), rounded to the storage dtype.
  void norm() {
    const int64_t d = p_.hidden;
    pool_->parallel_for(rows(), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        float ms = 0;
        for (int64_t j = 0; j < d; ++j) {
          const float x = element_f32(x_, t_, r * d + j);
          ms += x * x;
        }
        const float inv = 1.0f / std::sqrt(ms / static_cast<float>(d) + p_.eps);
        for (int64_t j = 0; j < d; ++j) set_element(normed_->ptr(), t_, r * d + j, element_f32(x_, t_, r * d + j) * inv * element_f32(g_, t_, j));
      }
    });
  }

  // act[r, e, j] = silu(gate) · up, rounded.
  void activate() {
    const int64_t d = p_.hidden;
    pool_->parallel_for(rows() * 2, [&](int64_t begin, int64_t end) {
      for (int64_t re = begin; re < end; ++re) {
        const int64_t r = re / 2, e = re % 2;
        for (int64_t j = 0; j < d; ++j) {
          const float gate = element_f32(gate_up_->ptr(), t_, r * 4 * d + 2 * e * d + j);
          const float up = element_f32(gate_up_->ptr(), t_, r * 4 * d + (2 * e + 1) * d + j);
          set_element(act_->ptr(), t_, re * d + j, gate / (1.0f + std::exp(-gate)) * up);
        }
      }
    });
  }

  // features: x + w₀E₀ + w₁E₁ at the row's slot; x + w'_hi·E_hi − w'_lo·E_lo at its contrastive slot.
  void mix() {
    const int64_t d = p_.hidden, F = p_.forward_rows, S = p_.slots;
    pool_->parallel_for(rows(), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / F, q = r % F, s_con = decoding::jakiro_contrastive_slot(p_, q);
        const float* z = router_ + r * 4;
        const auto w = decoding::jakiro_route(z, [](float x) { return std::exp(x); });
        const int64_t hi = w.hi, lo = 1 - hi;
        const void* e = expert_out_->ptr();
        for (int64_t j = 0; j < d; ++j) {
          const float x = element_f32(x_, t_, r * d + j);
          const float e0 = element_f32(e, t_, r * 2 * d + j), e1 = element_f32(e, t_, r * 2 * d + d + j);
          set_element(features_, t_, (b * S + q) * d + j, x + (w.w0 * e0 + w.w1 * e1));
          if (s_con >= 0) {
            const float eh = hi == 0 ? e0 : e1, el = lo == 0 ? e0 : e1;
            set_element(features_, t_, (b * S + s_con) * d + j, x + (w.w_hi * eh - w.w_lo * el));
          }
        }
      }
    });
  }

  ThreadPool* pool_ = nullptr;
  decoding::JakiroParams p_{};
  DType t_ = DType::f32;
  BufferPtr normed_, gate_up_, act_, expert_out_;
  const void *x_ = nullptr, *g_ = nullptr;
  float* router_ = nullptr;
  void* features_ = nullptr;
  project::ProjectionStage experts_in_, router_stage_, experts_out_, head_;
  std::unique_ptr<Impl> tree_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuJakiro, "jakiro", "cpu", "staged");
