// The CPU side of the KV-selection contract (reference/kvcomp/scored_selection.h). A method's impl
// derives from CpuScoredSelection and brings only its scoring: prepare_scores() to allocate what
// it needs (shapes only), score() to fill scores() — directly, or through pool_into_scores(). A
// positional method (no candidates ranked) overrides nothing. This base does the rest, in run():
//   score()                        when some candidate is kept by score
//   select   per row, parallel     forced tokens, top_k by the tie rule, lengths (kv_stages.h)
//   gather   per (row, K or V)     the compacted cache, zeros beyond each row's length
// The scorer's hooks are called only for cases that keep some candidate by score. Every task is
// independent and sequential inside, so no bit depends on the thread count.
#pragma once

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "kv_stages.h"

namespace attnbench::cpu {

class CpuScoredSelection : public Impl {
 public:
  Support supports(const Case& /*c*/, const DeviceLimits& /*limits*/) const override { return Support::yes(); }
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) final;
  void run() final;

 protected:
  // Shapes only: allocate the scorer's workspace through cpu.allocator().
  virtual void prepare_scores(const Case& /*c*/, CpuBackend& /*cpu*/, const IoBuffers& /*io*/) {}
  // Fills scores() [score rows, candidates] (and row_budget() with per-row budgets).
  virtual void score() {}

  const kvcomp::SelectionParams& selection() const { return s_; }
  ThreadPool& pool() const { return *pool_; }
  float* scores() const { return scores_->ptr<float>(); }
  int32_t* row_budget() const { return row_budget_->ptr<int32_t>(); }
  // The family's pooling stage: raw [batch·q_heads, candidates] per query head into scores().
  void pool_into_scores(const float* raw, int64_t radius, bool is_max);

 private:
  kvcomp::SelectionParams s_{};
  CpuBackend* cpu_ = nullptr;
  ThreadPool* pool_ = nullptr;
  const void *k_ = nullptr, *v_ = nullptr;
  void *k_kept_ = nullptr, *v_kept_ = nullptr;
  int32_t *kept_idx_ = nullptr, *kept_len_ = nullptr;
  size_t scratch_words_ = 0;
  BufferPtr scores_, row_budget_, scratch_;
};

}  // namespace attnbench::cpu
