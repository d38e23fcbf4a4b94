// specdecpp on the CPU (variant "race"): the acceptance head over every (row, step) in parallel on
// the backend's pool (two fp32 dot products of the hidden size, eight partial sums each so the
// loop vectorises; or the oracle's Σ min(p, q) in fp64), the stopping rule per row (an fp32 prefix
// product), then the chain verification stage (chain_verify_stage.h) over each row's drafts.
#include <algorithm>
#include <cmath>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "chain_verify_stage.h"
#include "reference/decoding/specdecpp_common.h"

namespace attnbench::cpu {
namespace {

class CpuSpecDecPP final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    if (c.i64("vocab") >= (int64_t{1} << 24)) return Support::no("race indices are tracked in fp32 lanes: vocab < 2^24");
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    pool_ = &as_cpu(backend).pool();
    s_ = decoding::specdecpp_params(c);
    stage_.prepare(decoding::specdecpp_chain_params(c), c.seed, backend, io);
    target_ = io["target_probs"].ptr<float>();
    draft_ = io["draft_probs"].ptr<float>();
    if (!s_.oracle) {
      hidden_ = io["hidden"].ptr<float>();
      weight_ = io["acc_weight"].ptr<float>();
      bias_ = io["acc_bias"].ptr<float>();
    }
    prob_ = io["accept_prob"].ptr<float>();
    len_ = io["draft_len"].ptr<int32_t>();
  }

  void run() override {
    const int64_t B = s_.batch, K = s_.max_drafts, D = s_.hidden, V = s_.vocab;
    pool_->parallel_for(B * K, [&](int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n) {
        const int64_t b = n / K, i = n % K;
        if (i == 0) {
          prob_[n] = 1.0f;  // the first step is skipped
        } else if (s_.oracle) {
          prob_[n] = static_cast<float>(min_mass(target_ + (b * (K + 1) + i) * V, draft_ + (b * K + i) * V, V));
        } else {
          const float* h = hidden_ + n * D;
          const float z0 = bias_[0] + dot(weight_, h, D), z1 = bias_[1] + dot(weight_ + D, h, D);
          prob_[n] = 1.0f / (1.0f + std::exp(z0 - z1));
        }
      }
    }, std::max<int64_t>(1, 65536 / std::max<int64_t>(s_.oracle ? V : D, 1)));
    for (int64_t b = 0; b < B; ++b) {
      float P = 1.0f;
      int32_t stop = static_cast<int32_t>(K);
      for (int32_t i = 1; i < K; ++i) {
        P *= prob_[b * K + i - 1];
        if (i >= s_.min_drafts && 1.0f - P > s_.threshold) {
          stop = i;
          break;
        }
      }
      len_[b] = stop;
    }
    stage_.run(len_);
  }

 private:
  static float dot(const float* a, const float* b, int64_t n) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
      for (int k = 0; k < 8; ++k) acc[k] += a[j + k] * b[j + k];
    for (; j < n; ++j) acc[0] += a[j] * b[j];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  }

  // Σ min(p, q): exact fp32 terms summed in fp64.
  static double min_mass(const float* p, const float* q, int64_t n) {
    double acc[4] = {0, 0, 0, 0};
    int64_t x = 0;
    for (; x + 4 <= n; x += 4)
      for (int k = 0; k < 4; ++k) acc[k] += std::min(p[x + k], q[x + k]);
    for (; x < n; ++x) acc[0] += std::min(p[x], q[x]);
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
  }

  ThreadPool* pool_ = nullptr;
  decoding::SpecDecParams s_{};
  ChainVerifyStage stage_;
  const float *target_ = nullptr, *draft_ = nullptr, *hidden_ = nullptr, *weight_ = nullptr, *bias_ = nullptr;
  float* prob_ = nullptr;
  int32_t* len_ = nullptr;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuSpecDecPP, "specdecpp", "cpu", "race");
