// moh on the CPU (variant "head_sparse"): the learned router's logits on the projection stage
// (projection_stage.h, fp32 out), the router per token on the pool (moh_router.h, the formulas the
// reference uses, in fp32), then the attention stage with head_sparse (attention_stage.h), which
// compacts each KV head's running rows and computes only those.
#include <cmath>
#include <cstring>
#include <vector>

#include "attention_stage.h"
#include "attnbench/impl.h"
#include "projection_stage.h"
#include "reference/attention/moh_router.h"

namespace attnbench::cpu {
namespace {

class CpuMoh final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    const moh::MohStages st = moh::moh_stages(c);
    r_ = st.router;
    dtype_ = c.dtype;
    pool_ = &cpu.pool();
    q_ = io["q"].ptr();
    gates_ = io["gates"].ptr<float>();
    heads_idx_ = io["heads_idx"].ptr<int32_t>();
    if (r_.learned) {
      logits_buf_ = cpu.allocator().allocate(st.logit_elements * sizeof(float), "moh.logits");
      logits_ = logits_buf_->ptr<float>();
      logits_stage_.prepare(st.router_logits, c.dtype, io["x"].ptr(), io["w_router"].ptr(), logits_, nullptr, cpu);
    }
    const attention::AttentionParams& a = st.attention;
    attention_.prepare(a, c.dtype, attn::case_io(a, io, gates_), cpu);
  }

  std::string compute_ceiling() const override { return attention_.compute_ceiling(); }

  void run() override {
    if (r_.learned) logits_stage_.run();
    route();
    attention_.run();
  }

 private:
  // Per token: the routed heads' scores, the kept heads, their gates and heads_idx.
  void route() {
    const int64_t H = r_.heads, L = r_.q_len, d = r_.head_dim, n_act = moh::active_heads(r_);
    const size_t es = dtype_size(dtype_);
    pool_->parallel_for(int64_t{r_.batch} * L, [&](int64_t begin, int64_t end) {
      std::vector<float> score(H), gate(H);
      std::vector<char> kept(H);
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / L, i = t % L;
        const float* logit = r_.learned ? logits_ + t * r_.logit_row : nullptr;
        if (logit) {
          std::copy(logit, logit + H, score.begin());
        } else {
          for (int64_t h = r_.shared_heads; h < H; ++h) score[h] = norm(static_cast<const char*>(q_) + ((b * H + h) * L + i) * d * es, d);
        }
        moh::kept_by_score(r_, score.data(), kept.data());
        if (logit) moh::learned_gates(r_, logit, kept.data(), gate.data());
        for (int64_t h = 0, n = 0; h < H; ++h) {
          gates_[(b * H + h) * L + i] = logit ? gate[h] : static_cast<float>(kept[h]);
          if (kept[h]) heads_idx_[t * n_act + n++] = static_cast<int32_t>(h);
        }
      }
    });
  }

  // ‖row‖₂ in fp32 of a query row in the storage dtype (a small part of the step: H·d per token).
  float norm(const char* row, int64_t d) const {
    const auto sum_squares = [&](auto widen) {
      float sq = 0;
      for (int64_t x = 0; x < d; ++x) {
        const float v = widen(x);
        sq += v * v;
      }
      return sq;
    };
    const auto* h = reinterpret_cast<const uint16_t*>(row);
    float sq;
    if (dtype_ == DType::f32) sq = sum_squares([&](int64_t x) { return reinterpret_cast<const float*>(row)[x]; });
    else if (dtype_ == DType::f16) sq = sum_squares([&](int64_t x) { return f16_to_f32(h[x]); });
    else sq = sum_squares([&](int64_t x) { return bf16_to_f32(h[x]); });
    return std::sqrt(sq);
  }

  moh::RouterParams r_{};
  DType dtype_ = DType::f32;
  ThreadPool* pool_ = nullptr;
  const void* q_ = nullptr;
  float* gates_ = nullptr;
  float* logits_ = nullptr;
  int32_t* heads_idx_ = nullptr;
  BufferPtr logits_buf_;
  project::ProjectionStage logits_stage_;
  attn::AttentionStage attention_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuMoh, "moh", "cpu", "head_sparse");
