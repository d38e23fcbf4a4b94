// The Vulkan side of the KV-selection contract (reference/kvcomp/scored_selection.h; the split
// between scorer and stages is in docs/design.md). On Vulkan a scorer builds pipelines bound to
// scores() in prepare_scores() (bind_pool() where it pools), records their dispatches in score()
// (ending with dispatch_pool()), and names its shaders' limits in unsupported(); run() adds
// kv_stages.h's kv_select and kv_gather to the same command buffer, then for a method that merges
// what it evicts (kvcomp::merged_slots(c) > 0: zeromerge) kv_merge's passes — or, for a selection-only
// method (s.sparse_step), kv_select and the decode step over the kept set: the attention stage
// (attention_stage.h, portable) with the kept lists (kvcomp::sparse_step_params), reading K and V
// in place.
// The selection cache (kvcomp::selection_cache_on(c), selection-only; reference/kvcomp/
// selection_cache.h): run() first records kv_cache_hit (the cosines, cache_hit) and reads
// cache_hit back to the host — a submit and wait, as the authors' retriever branches on the host
// on the GPU's decision — then records the rest by it: when every score row hit, neither the
// scorer nor kv_select (nor kv_across) runs; otherwise they run for every row. kv_cache_take then
// overwrites the hit rows' kept lists with the cached selection before the decode step.
#pragma once

#include <memory>
#include <string>

#include "../attention/attention_stage.h"
#include "../runtime/vulkan_backend.h"
#include "kv_stages.h"
#include "reference/kvcomp/scored_selection_impl.h"

namespace attnbench::vulkan {

class VulkanScoredSelection : public kvcomp::ScoredSelectionImpl {
 public:
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) final;
  void run() final;

 protected:
  std::string stages_unsupported(const kvcomp::SelectionParams& s, const DeviceLimits& limits) const final {
    return kv::plan_stages(s, limits).unsupported;
  }
  std::string step_unsupported(const Case& c, const DeviceLimits& limits) const final;
  virtual void prepare_scores(const Case& /*c*/, const IoBuffers& /*io*/) {}
  virtual void score() {}

  VulkanBackend& backend() const { return *be_; }
  const kvcomp::SelectionParams& selection() const { return stages_.select.sel; }
  const Buffer& scores() const { return *scores_; }
  // Each row's budget [batch·kv_heads] i32, read by the select stage with per-row budgets.
  const Buffer& row_budget() const { return *row_budget_; }
  // The family's pooling stage from `raw` [batch·q_heads, segments, candidates] into scores().
  void bind_pool(const kv::PoolStage& stage, const Buffer& raw);
  void dispatch_pool();

 private:
  VulkanBackend* be_ = nullptr;
  bool scoring_ = false;  // kvcomp::scores_needed(c): some row ranks its candidates
  kv::StagesPlan stages_;
  kv::PoolStage pool_plan_;
  BufferPtr scores_, row_budget_;
  std::unique_ptr<BoundPipeline> pool_, select_, gather_;
  // kv_merge (merged slots): its plan (no passes when the method merges nothing), running sums.
  kv::MergeStage merge_plan_;
  BufferPtr merge_sums_;
  std::unique_ptr<BoundPipeline> merge_;
  // kv_across: workspaces and its passes (kv_stages.h).
  BufferPtr floor_idx_, across_idx_, boosted_, scratch_len_;
  std::unique_ptr<BoundPipeline> floor_select_, across_select_, copy_, raise_, count_;
  // Selection-only: the decode step over the kept set and its (unread) log-sum-exp.
  attn::Stage step_;
  BufferPtr step_lse_;
  // The selection cache (kv_stages.h's kv_cache): its plan, the cosine and take stages, the
  // output cache_hit and its host copy (none without the cache).
  kv::CacheStage cache_plan_;
  std::unique_ptr<BoundPipeline> cache_hit_, cache_take_;
  const Buffer* cache_hit_out_ = nullptr;
  HostTensor cache_hits_;
};

}  // namespace attnbench::vulkan
