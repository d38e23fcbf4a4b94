// The chain verification stage on the CPU (chain_verify_stage.h).
#include "chain_verify_stage.h"

#include <algorithm>
#include <cmath>

#include "attnbench/rng.h"

namespace attnbench::cpu {

namespace {
constexpr int64_t kSpanTokens = 8192;  // vocabulary per race task
}  // namespace

using decoding::accept_index;
using decoding::prob_row_of;
using decoding::race_index;

void ChainVerifyStage::prepare(const decoding::SpeculativeParams& s, uint64_t seed, Backend& backend, const IoBuffers& io) {
  CpuBackend& cpu = as_cpu(backend);
  pool_ = &cpu.pool();
  kernels_ = &cpu.kernels<race::Kernels>();
  s_ = s;
  seed_ = seed;
  target_ = io["target_probs"].ptr<float>();
  draft_ = io["draft_probs"].ptr<float>();
  ids_ = io["draft_token_ids"].ptr<int32_t>();
  tokens_ = io["tokens"].ptr<int32_t>();
  emitted_ = io["emitted"].ptr<int32_t>();
  accepted_ = io["accepted_token_num"].ptr<int32_t>();
  emitted_draft_ = io["emitted_draft_token_num"].ptr<int32_t>();
  span_ = std::min<int64_t>(s_.vocab, kSpanTokens);
  spans_ = (s_.vocab + span_ - 1) / span_;
  const PhiloxStream race(seed, decoding::kRaceSite, kDomainDraws);
  site_ = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), race.stream_id(), kDomainDraws};
  stop_ = backend.allocator().allocate(s_.rows * sizeof(int32_t) * 2, "chain_verify.stop");
  best_ = backend.allocator().allocate(s_.rows * spans_ * sizeof(race::RaceBest), "chain_verify.best");
  scratch_words_ = race::race_scratch_words(span_);
  scratch_ = backend.allocator().allocate(scratch_words_ * pool_->size() * sizeof(uint32_t), "chain_verify.scratch");
}

void ChainVerifyStage::run(const int32_t* lengths) {
  const int64_t R = s_.rows, K = s_.draft_len, V = s_.vocab;
  int32_t* stop = stop_->ptr<int32_t>();
  int32_t* residual = stop + R;  // 1: race over max(0, p − q); 0: over p
  const PhiloxStream accept(seed_, decoding::kAcceptSite, kDomainDraws);
  pool_->parallel_for(R, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t pr = prob_row_of(s_, r);
      const int64_t len = lengths != nullptr ? lengths[r] : K;
      int32_t n_accepted = 0, first_reject = -1;
      for (int64_t t = 0; t < len; ++t) {
        const int32_t x = ids_[r * K + t];
        const float p = target_[(pr * (K + 1) + t) * V + x], q = draft_[(pr * K + t) * V + x];
        const bool ok = accept.uniform_f32(accept_index(s_, r, t)) * q < p;
        n_accepted += ok;
        if (!ok && first_reject < 0) first_reject = static_cast<int32_t>(t);
      }
      const int32_t drafts = first_reject < 0 ? static_cast<int32_t>(len) : first_reject;
      int32_t* row = tokens_ + r * (K + 1);
      std::copy_n(ids_ + r * K, drafts, row);
      std::fill(row + drafts, row + K + 1, -1);  // the race fills position `drafts` in pass 3
      emitted_[r] = drafts + 1;
      emitted_draft_[r] = drafts;
      accepted_[r] = n_accepted;
      stop[r] = drafts;
      residual[r] = 0;
      if (drafts < len) {
        const float* p = target_ + (pr * (K + 1) + drafts) * V;
        const float* q = draft_ + (pr * K + drafts) * V;
        for (int64_t x = 0; x < V && !residual[r]; ++x) residual[r] = p[x] > q[x];
      }
    }
  }, 256);

  auto* best = best_->ptr<race::RaceBest>();
  uint32_t* scratch = scratch_->ptr<uint32_t>();
  pool_->parallel_for_slots(R * spans_, [&](int64_t begin, int64_t end, unsigned slot) {
    uint32_t* words = scratch + slot * scratch_words_;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t r = task / spans_, sp = task % spans_, t = stop[r], pr = prob_row_of(s_, r);
      const float* p = target_ + (pr * (K + 1) + t) * V;
      const float* q = residual[r] ? draft_ + (pr * K + t) * V : nullptr;
      const int64_t x0 = sp * span_, x1 = std::min(V, x0 + span_);
      best[task] = kernels_->race({p, q, nullptr}, x0, x1, site_, race_index(s_, r, t, 0), words);
    }
  }, std::max<int64_t>(1, 4096 / span_));

  pool_->parallel_for(R, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) tokens_[r * (K + 1) + stop[r]] = race::race_winner(best + r * spans_, spans_);
  }, 256);
}

}  // namespace attnbench::cpu
