// The CPU side of the KV-selection contract (reference/kvcomp/scored_selection.h). A method's impl
// derives from CpuScoredSelection and brings only its scoring: unsupported() for its own limits,
// prepare_scores() to allocate what it needs (shapes only; reserve_pooling() before using the
// pooling stage), score() to fill scores() — directly, or through pool_into_scores(). A
// positional method (no candidates ranked) overrides nothing. This base does the rest, in run():
//   score()                        when some row ranks its candidates (kvcomp::scores_needed(c))
//   across   per sequence          AdaKV's row budgets from the scores (s.across_heads)
//   select   per row, parallel     forced tokens, top_k by the tie rule, lengths (kv_stages.h)
//   gather   per (row, K or V)     the compacted cache, zeros beyond each row's length
//   or, selection-only (s.sparse_step), the decode step over the kept set: the attention stage
//   with the kept lists (kvcomp::sparse_step_params), reading K and V in place
// The scorer's hooks are called only for cases that rank some candidates. Every task is
// independent and sequential inside, so no bit depends on the thread count.
#pragma once

#include "../attention/attention_stage.h"
#include "../runtime/cpu_backend.h"
#include "kv_stages.h"
#include "reference/kvcomp/scored_selection_impl.h"

namespace attnbench::cpu {

class CpuScoredSelection : public kvcomp::ScoredSelectionImpl {
 public:
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) final;
  void run() final;

 protected:
  // Shapes only: allocate the scorer's workspace through cpu.allocator().
  virtual void prepare_scores(const Case& /*c*/, CpuBackend& /*cpu*/, const IoBuffers& /*io*/) {}
  // Fills scores() [score rows, candidates]. (Planned per-row budgets are in row_budget() already.)
  virtual void score() {}

  const kvcomp::SelectionParams& selection() const { return s_; }
  ThreadPool& pool() const { return *pool_; }
  float* scores() const { return scores_->ptr<float>(); }
  int32_t* row_budget() const { return row_budget_->ptr<int32_t>(); }
  // The family's pooling stage: raw [batch·q_heads, candidates] per query head into scores(),
  // over keys within `radius`, by kvcomp::PoolMode, each score row the mean of its heads
  // (kvcomp::heads_per_score_row); prepare_scores() reserves its scratch with reserve_pooling(radius).
  void reserve_pooling(int64_t radius) { pool_radius_ = radius; }
  void pool_into_scores(const float* raw, int32_t mode);

 private:
  kvcomp::SelectionParams s_{};
  CpuBackend* cpu_ = nullptr;
  ThreadPool* pool_ = nullptr;
  const void *k_ = nullptr, *v_ = nullptr;
  void *k_kept_ = nullptr, *v_kept_ = nullptr;
  int64_t merged_ = 0;  // kvcomp::merged_slots(c): the evicted tokens' slots per row
  bool cache_ = false;  // kvcomp::selection_cache_on(c): a row close to its cached query reuses its set
  float cache_threshold_ = 0;
  const void *q_ = nullptr, *q_cached_ = nullptr;
  const int32_t* topk_cached_ = nullptr;
  int32_t* cache_hit_ = nullptr;
  DType dtype_ = DType::f32;
  void *k_merged_ = nullptr, *v_merged_ = nullptr;
  float* w_merged_ = nullptr;
  int32_t *kept_idx_ = nullptr, *kept_len_ = nullptr;
  bool scoring_ = false;      // kvcomp::scores_needed(c): some row ranks its candidates
  int64_t pool_radius_ = -1;  // no pooling
  size_t scratch_words_ = 0, across_words_ = 0;
  BufferPtr scores_, row_budget_, scratch_, across_, step_lse_;
  attn::AttentionStage step_;  // selection-only: the decode step over the kept set
};

}  // namespace attnbench::cpu
