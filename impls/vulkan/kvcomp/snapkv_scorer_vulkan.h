// The SnapKV scorer on Vulkan (semantics: reference/kvcomp/snapkv_scorer.h), the impl of every
// method that scores with it (snapkv, pyramidkv, headkv, adakv, tova, sagekv, h2o, zeromerge,
// tokenselect; each method's <method>_vulkan.cpp registers it, variant "pooled"): the window's softmax
// statistics and the window sums of every candidate (two passes of snapkv_scores, snapkv_plan.h),
// then the family's pooling, selection and gather or decode step (scored_selection_vulkan.h),
// which also carry the methods' budgets: per layer, per head (uploaded), across heads (kv_across).
// Five dispatches, two when nothing is scored (plus the attention stage's merge where it splits).
#pragma once

#include "attnbench/error.h"
#include "scored_selection_vulkan.h"
#include "snapkv_plan.h"

namespace attnbench::vulkan {

class VulkanSnapkvScorer : public VulkanScoredSelection {
  static snapkv::Plan plan(const Case& c, const DeviceLimits& limits) {
    return snapkv::make_plan(kvcomp::selection_params(c), kvcomp::snapkv_params(c), c.dtype, limits);
  }

  std::string unsupported(const Case& c, const DeviceLimits& limits) const override { return plan(c, limits).unsupported; }

  void prepare_scores(const Case& c, const IoBuffers& io) override {
    plan_ = plan(c, backend().probe().limits);
    part_ml_ = backend().allocator().allocate(plan_.part_ml_bytes, "snapkv.softmax_partials");
    a_part_ = backend().allocator().allocate(plan_.a_part_bytes, "snapkv.window_sums");
    std::vector<uint32_t> constants = plan_.scores_constants;
    // A selection-only step's window is its decode query q, a window of one (sparse_step.h).
    const Buffer& queries = io[selection().sparse_step ? "q" : "q_obs"];
    const std::vector<const Buffer*> buffers = {&queries, &io["k"], part_ml_.get(), a_part_.get()};
    stats_ = backend().bind(backend().pipeline("snapkv_scores", constants, 4), buffers);
    constants[6] = 1;  // MODE 1: window sums
    sums_ = backend().bind(backend().pipeline("snapkv_scores", constants, 4), buffers);
    bind_pool(plan_.pool, *a_part_);
  }

  void score() override {
    backend().dispatch(*stats_, plan_.stats, plan_.stats.plan.groups);
    backend().dispatch(*sums_, plan_.sums, plan_.sums.plan.groups);
    dispatch_pool();
  }

  snapkv::Plan plan_;
  BufferPtr part_ml_, a_part_;
  std::unique_ptr<BoundPipeline> stats_, sums_;
};

}  // namespace attnbench::vulkan
