// frspec on the CPU (variant "subset_head"): the draft head over the subset's rows, q and the
// drafts here, then speculative_sampling's CPU stage for the verification.
//
//   1. the head: tasks of subset rows in parallel; each converts kHeadRows rows of the LM head to
//      fp32 once and takes their dot products with every hidden state (frspec_kernel.h), so the
//      V'·D head bytes are read once whatever the number of hidden states.
//   2. per hidden state: q = softmax(logits/T) over the subset (greedy: one-hot at the first
//      maximum), scattered to its tokens' ids in the verification's full-vocabulary q (zero
//      elsewhere since prepare()).
//   3. per (row, position): the race over q on the subset (race_kernel.h), mapped back to the id.
//   4. the verification stage, speculative_sampling's CPU impl over these buffers.
#include <algorithm>
#include <cstring>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "frspec_kernel.h"
#include "race_kernel.h"
#include "reference/decoding/frspec_common.h"

namespace attnbench::cpu {
namespace {

constexpr int64_t kRowsPerTask = 64;  // subset rows of one head task

class CpuFrspec final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    return stage_supports(decoding::frspec_verification_case(c), "cpu", limits);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    kernels_ = &cpu.kernels<frspec::Kernels>();
    race_ = &cpu.kernels<race::Kernels>();
    s_ = decoding::frspec_params(c);
    const int64_t H = int64_t{s_.prob_rows} * s_.draft_len, D = s_.hidden, V = s_.vocab;
    padded_ = (D + 15) / 16 * 16;
    hidden32_ = backend.allocator().allocate(H * padded_ * sizeof(float), "frspec.hidden_f32");
    scratch_ = backend.allocator().allocate(
        pool_->size() * std::max<size_t>(frspec::head_scratch_floats(padded_), race::race_scratch_words(s_.subset)) * 4,
        "frspec.scratch");
    q_full_ = backend.allocator().allocate(H * V * sizeof(float), "frspec.draft_probs_full");
    std::memset(q_full_->ptr(), 0, H * V * sizeof(float));
    head_ = io["lm_head"].ptr();
    dtype_ = c.dtype;
    hidden_ = io["hidden"].ptr();
    subset_ = io["subset_ids"].ptr<int32_t>();
    logits_ = io["draft_logits"].ptr<float>();
    probs_ = io["draft_probs"].ptr<float>();
    ids_ = io["draft_token_ids"].ptr<int32_t>();
    const PhiloxStream draws(c.seed, decoding::kFrspecDraftSite, kDomainDraws);
    site_ = {s_.seed_lo, s_.seed_hi, draws.stream_id(), kDomainDraws};

    // The verification reads the target and the drafts, and q on the whole vocabulary.
    verify_ = prepare_stage(decoding::frspec_verification_case(c), backend, io, {{"draft_probs", q_full_.get()}});
  }

  void run() override {
    const int64_t H = int64_t{s_.prob_rows} * s_.draft_len, D = s_.hidden, Vs = s_.subset, V = s_.vocab, K = s_.draft_len;
    const auto elt = static_cast<int64_t>(dtype_size(dtype_));
    float* hid = hidden32_->ptr<float>();
    for (int64_t h = 0; h < H; ++h) kernels_->to_f32(static_cast<const char*>(hidden_) + h * D * elt, dtype_, D, padded_, hid + h * padded_);
    const frspec::HeadView view{head_, dtype_, D, padded_, subset_, hid, H};
    const size_t slot_floats = scratch_->bytes() / 4 / pool_->size();
    float* scratch = scratch_->ptr<float>();
    pool_->parallel_for_slots((Vs + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t begin, int64_t end, unsigned slot) {
      for (int64_t task = begin; task < end; ++task)
        kernels_->head(view, task * kRowsPerTask, std::min(Vs, (task + 1) * kRowsPerTask), logits_, Vs, scratch + slot * slot_floats);
    });

    float* q_full = q_full_->ptr<float>();
    pool_->parallel_for(H, [&](int64_t begin, int64_t end) {
      for (int64_t h = begin; h < end; ++h) {
        const float* z = logits_ + h * Vs;
        float* q = probs_ + h * Vs;
        if (s_.greedy) {
          std::fill_n(q, Vs, 0.0f);
          q[std::max_element(z, z + Vs) - z] = 1.0f;
        } else {
          kernels_->softmax(z, Vs, s_.inv_temperature, q);
        }
        for (int64_t j = 0; j < Vs; ++j) q_full[h * V + subset_[j]] = q[j];
      }
    });

    auto* words = reinterpret_cast<uint32_t*>(scratch);
    pool_->parallel_for_slots(int64_t{s_.rows} * K, [&](int64_t begin, int64_t end, unsigned slot) {
      for (int64_t n = begin; n < end; ++n) {
        const int64_t r = n / K, t = n % K, h = decoding::frspec_chain_of(s_, r) * K + t;
        const float* q = probs_ + h * Vs;
        int64_t j;
        if (s_.greedy) {
          j = std::max_element(q, q + Vs) - q;
        } else {
          const race::RaceBest best = race_->race({q, nullptr, nullptr}, 0, Vs, site_, decoding::frspec_draft_index(s_, r, t, 0),
                                                  words + slot * slot_floats);
          j = race::race_winner(&best, 1);
        }
        ids_[n] = subset_[j];
      }
    }, std::max<int64_t>(1, 16384 / Vs));

    verify_->run();
  }

 private:
  ThreadPool* pool_ = nullptr;
  const frspec::Kernels* kernels_ = nullptr;
  const race::Kernels* race_ = nullptr;
  decoding::FrspecParams s_{};
  int64_t padded_ = 0;
  DType dtype_ = DType::f32;
  const void *head_ = nullptr, *hidden_ = nullptr;
  const int32_t* subset_ = nullptr;
  float *logits_ = nullptr, *probs_ = nullptr;
  int32_t* ids_ = nullptr;
  race::PhiloxSite site_{};
  BufferPtr hidden32_, scratch_, q_full_;
  std::unique_ptr<Impl> verify_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuFrspec, "frspec", "cpu", "subset_head");
