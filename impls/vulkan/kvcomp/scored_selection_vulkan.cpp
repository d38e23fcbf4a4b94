#include "scored_selection_vulkan.h"

#include <algorithm>

#include "attnbench/error.h"

namespace attnbench::vulkan {

void VulkanScoredSelection::prepare(const Case& c, Backend& backend, const IoBuffers& io) {
  be_ = &as_vulkan(backend);
  const kvcomp::SelectionParams s = kvcomp::selection_params(c);
  stages_ = kv::plan_stages(s, be_->probe().limits);
  ATTNBENCH_ASSERT(stages_.unsupported.empty(), "prepare() of a case supports() refused: ", stages_.unsupported);
  Allocator& alloc = be_->allocator();
  scores_ = alloc.allocate(std::max<uint64_t>(16, kvcomp::score_rows(s) * static_cast<uint64_t>(s.candidates) * 4), "selection.scores");
  row_budget_ = alloc.allocate(std::max<uint64_t>(16, kvcomp::cache_rows(s) * 4), "selection.row_budget");
  select_ = be_->bind(be_->pipeline("kv_select", stages_.select_constants, 4),
                      {scores_.get(), row_budget_.get(), &io["kept_idx"], &io["kept_len"]});
  gather_ = be_->bind(be_->pipeline("kv_gather", stages_.gather_constants, 6),
                      {&io["kept_idx"], &io["kept_len"], &io["k"], &io["v"], &io["k_kept"], &io["v_kept"]});
  if (kvcomp::scores_needed(s)) prepare_scores(c, io);
}

void VulkanScoredSelection::bind_pool(const kv::PoolStage& stage, const Buffer& raw) {
  pool_plan_ = stage;
  pool_ = be_->bind(be_->pipeline("kv_pool", stage.constants, 2), {&raw, scores_.get()});
}

void VulkanScoredSelection::dispatch_pool() { be_->dispatch(*pool_, pool_plan_.push, pool_plan_.push.plan.groups); }

void VulkanScoredSelection::run() {
  if (kvcomp::scores_needed(selection())) score();
  be_->dispatch(*select_, stages_.select, stages_.select_groups);
  be_->dispatch(*gather_, stages_.gather, stages_.gather_groups);
}

}  // namespace attnbench::vulkan
