// The CUDA side of the KV-selection contract (reference/kvcomp/scored_selection.h; the split
// between scorer and stages is in docs/design.md). On CUDA a scorer's hooks are unsupported()
// (dtypes, grids, shared memory), prepare_scores() (configure kernels, allocate workspaces) and
// score(stream), which enqueues the kernels that fill scores(), through pool_into_scores() where
// it pools. This base does the rest, on the same stream, in run():
//   cache hit  a selection-only method's selection cache (kvcomp::selection_cache_on(c):
//              tokenselect): the cosines of q and q_cached per score row into cache_hit, copied
//              to the host (the one synchronisation inside run(), as the authors' retriever
//              branches on the host); when every row hit, score(), across and select are skipped
//   score()    when some row ranks its candidates (kvcomp::scores_needed(c))
//   across     AdaKV's row budgets from the scores (s.across_heads; kv_stages.h)
//   select     forced tokens, top_k by the tie rule, lengths; per-row budgets from row_budget(),
//              which prepare() fills with the case's planned budgets (kvcomp::planned_row_budgets)
//   cache take the selection cache's hit rows: their kept lists from topk_cached (kv_stages.h)
//   gather     the compacted cache, zeros beyond each row's length
//   merge      a merging method's dense slots (kvcomp::merged_slots(c) > 0: zeromerge): the evicted
//              tokens' means in contiguous groups, with their sizes (kv_stages.h)
//   or, selection-only (s.sparse_step), the decode step over the kept set: the attention stage
//   (attention_stage.h; mma where it takes the step, else general) with the kept lists
//   (kvcomp::sparse_step_params), reading K and V in place
#pragma once

#include <string>
#include <vector>

#include "../attention/attention_stage.h"
#include "../runtime/cuda_backend.h"
#include "kv_stages.h"
#include "reference/kvcomp/scored_selection_impl.h"

namespace attnbench::cuda {

class CudaScoredSelection : public kvcomp::ScoredSelectionImpl {
 public:
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) final;
  void run() final;

 protected:
  std::string stages_unsupported(const kvcomp::SelectionParams& s, const DeviceLimits& limits) const final;
  std::string step_unsupported(const Case& c, const DeviceLimits& limits) const final;
  virtual void prepare_scores(const Case& /*c*/, CudaBackend& /*be*/, const IoBuffers& /*io*/) {}
  virtual void score(cudaStream_t /*stream*/) {}

  const kvcomp::SelectionParams& selection() const { return args_.sel; }
  float* scores() const { return args_.scores; }
  int32_t* row_budget() const { return row_budget_->ptr<int32_t>(); }
  // The family's pooling stage: raw [batch·q_heads, candidates] per query head into scores(), over
  // keys within `radius`, by kvcomp::PoolMode `mode`, each score row the mean of its heads
  // (kvcomp::heads_per_score_row).
  void pool_into_scores(const float* raw, int radius, int32_t mode, cudaStream_t stream);

 private:
  CudaBackend* be_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool scoring_ = false;  // kvcomp::scores_needed(c): some row ranks its candidates
  kv::StageArgs args_{};
  kv::AcrossArgs across_{};
  kv::MergeArgs merge_{};  // merge_.slots = kvcomp::merged_slots(c): 0 merges nothing
  BufferPtr scores_, row_budget_;
  BufferPtr floor_idx_, boosted_, across_idx_, across_lens_;  // the across stage's workspaces
  // The selection cache (cache_.cache_hit null when off) and its decision on the host.
  kv::CacheArgs cache_{};
  std::vector<int32_t> cache_hits_;
  // Selection-only: the decode step over the kept set and its (unread) log-sum-exp.
  AttentionStage step_;
  BufferPtr step_lse_;
};

}  // namespace attnbench::cuda
