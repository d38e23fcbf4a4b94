#include "scored_selection_vulkan.h"

#include <algorithm>

#include "attnbench/error.h"
#include "reference/kvcomp/sparse_step.h"

namespace attnbench::vulkan {

namespace {

// The decode step of a selection-only case: gather_decode's plan (per-head lists).
attn::Plan step_plan(const kvcomp::SelectionParams& s, DType dtype, const DeviceLimits& limits) {
  return attn::plan_variant(attn::Variant::portable, kvcomp::sparse_step_params(s), dtype, limits, "decode");
}

}  // namespace

std::string VulkanScoredSelection::step_unsupported(const Case& c, const DeviceLimits& limits) const {
  const std::string why = step_plan(kvcomp::selection_params(c), c.dtype, limits).unsupported;
  return why.empty() ? why : cat("the decode step over the kept set: ", why);
}

void VulkanScoredSelection::prepare(const Case& c, Backend& backend, const IoBuffers& io) {
  be_ = &as_vulkan(backend);
  const kvcomp::SelectionParams s = kvcomp::selection_params(c);
  scoring_ = kvcomp::scores_needed(c);
  merge_plan_ = {};
  cache_plan_ = {};
  cache_hit_.reset();
  cache_take_.reset();
  cache_hit_out_ = nullptr;
  stages_ = kv::plan_stages(s, be_->probe().limits);
  ATTNBENCH_ASSERT(stages_.unsupported.empty(), "prepare() of a case supports() refused: ", stages_.unsupported);
  Allocator& alloc = be_->allocator();
  scores_ = alloc.allocate(std::max<uint64_t>(16, kvcomp::score_rows(s) * static_cast<uint64_t>(s.candidates) * 4), "selection.scores");
  const std::vector<int32_t> planned = kvcomp::planned_row_budgets(c);
  HostTensor budgets("row_budget", DType::i32, {std::max<int64_t>(4, kvcomp::cache_rows(s))});
  for (size_t r = 0; r < planned.size(); ++r) budgets.set(static_cast<int64_t>(r), planned[r]);
  row_budget_ = alloc.allocate(budgets.bytes(), "selection.row_budget");
  if (!planned.empty()) be_->upload(budgets, *row_budget_);
  select_ = be_->bind(be_->pipeline("kv_select", stages_.select_constants, 4),
                      {scores_.get(), row_budget_.get(), &io["kept_idx"], &io["kept_len"]});
  if (s.sparse_step) {  // no compacted copy: the step reads the kept keys in place
    step_lse_ = alloc.allocate(std::max<uint64_t>(16, static_cast<uint64_t>(s.batch) * s.q_heads * 4), "sparse_step.lse");
    attn::Buffers b{&io["q"], &io["k"], &io["v"], &io["kept_len"], &io["O"], step_lse_.get()};
    b.key_idx = &io["kept_idx"];
    step_.prepare(*be_, step_plan(s, c.dtype, be_->probe().limits), c.dtype, b);
    if (kvcomp::selection_cache_on(c)) {
      cache_plan_ = kv::plan_cache(s, c.dtype, kvcomp::selection_cache_threshold(c), be_->probe().limits);
      ATTNBENCH_ASSERT(cache_plan_.unsupported.empty(), "the selection cache's stages cannot run this case: ", cache_plan_.unsupported);
      cache_hit_out_ = &io["cache_hit"];
      cache_hit_ = be_->bind(be_->pipeline("kv_cache_hit", cache_plan_.hit_constants, 3), {&io["q"], &io["q_cached"], cache_hit_out_});
      cache_take_ = be_->bind(be_->pipeline("kv_cache_take", cache_plan_.take_constants, 4),
                              {&io["topk_cached"], cache_hit_out_, &io["kept_idx"], &io["kept_len"]});
      cache_hits_ = HostTensor("cache_hit", DType::i32, {kvcomp::score_rows(s)});
    }
  } else {
    gather_ = be_->bind(be_->pipeline("kv_gather", stages_.gather_constants, 6),
                        {&io["kept_idx"], &io["kept_len"], &io["k"], &io["v"], &io["k_kept"], &io["v_kept"]});
    if (const int64_t slots = kvcomp::merged_slots(c); slots > 0) {
      merge_plan_ = kv::plan_merge(s, slots, c.dtype, be_->probe().limits);
      ATTNBENCH_ASSERT(merge_plan_.unsupported.empty(), "the merge stage cannot run this case: ", merge_plan_.unsupported);
      merge_sums_ = alloc.allocate(merge_plan_.sums_bytes, "selection.merge_sums");
      merge_ = be_->bind(be_->pipeline("kv_merge", merge_plan_.constants, 8),
                         {&io["kept_idx"], &io["kept_len"], &io["k"], &io["v"], &io["k_merged"], &io["v_merged"],
                          &io["w_merged"], merge_sums_.get()});
    }
  }
  if (stages_.across) {
    floor_idx_ = alloc.allocate(stages_.floor_idx_bytes, "selection.floor_idx");
    across_idx_ = alloc.allocate(stages_.across_idx_bytes, "selection.across_idx");
    boosted_ = alloc.allocate(stages_.boosted_bytes, "selection.boosted");
    scratch_len_ = alloc.allocate(std::max<uint64_t>(16, kvcomp::cache_rows(s) * 4), "selection.scratch_len");
    const Pipeline& select = be_->pipeline("kv_select", stages_.select_constants, 4);
    floor_select_ = be_->bind(select, {scores_.get(), row_budget_.get(), floor_idx_.get(), scratch_len_.get()});
    across_select_ = be_->bind(select, {boosted_.get(), row_budget_.get(), across_idx_.get(), scratch_len_.get()});
    const auto across = [&](uint32_t mode, const Buffer& chosen) {
      return be_->bind(be_->pipeline("kv_across", {stages_.across_threads, mode}, 4),
                       {scores_.get(), &chosen, boosted_.get(), row_budget_.get()});
    };
    copy_ = across(0, *floor_idx_);
    raise_ = across(1, *floor_idx_);
    count_ = across(2, *across_idx_);
  }
  if (scoring_) prepare_scores(c, io);
}

void VulkanScoredSelection::bind_pool(const kv::PoolStage& stage, const Buffer& raw) {
  pool_plan_ = stage;
  pool_ = be_->bind(be_->pipeline("kv_pool", stage.constants, 2), {&raw, scores_.get()});
}

void VulkanScoredSelection::dispatch_pool() { be_->dispatch(*pool_, pool_plan_.push, pool_plan_.push.plan.groups); }

void VulkanScoredSelection::run() {
  bool every_row_hits = false;
  if (cache_hit_) {  // the cosines first, and the decision on the host (a submit and wait)
    be_->dispatch(*cache_hit_, cache_plan_.push, cache_plan_.hit_groups);
    be_->download(*cache_hit_out_, cache_hits_);
    const int32_t* hits = cache_hits_.data<int32_t>();
    every_row_hits = std::all_of(hits, hits + cache_hits_.numel(), [](int32_t h) { return h != 0; });
  }
  if (!every_row_hits) {  // kv_cache_take writes every row of a step whose every row hit
    if (scoring_) score();
    if (stages_.across) {
      be_->dispatch(*copy_, stages_.select, stages_.copy_groups);
      if (stages_.floor_groups) {
        be_->dispatch(*floor_select_, stages_.floor_select, stages_.floor_groups);
        be_->dispatch(*raise_, stages_.select, stages_.raise_groups);
      }
      be_->dispatch(*across_select_, stages_.across_select, stages_.across_groups);
      be_->dispatch(*count_, stages_.select, stages_.count_groups);
    }
    be_->dispatch(*select_, stages_.select, stages_.select_groups);
  }
  if (cache_take_) be_->dispatch(*cache_take_, cache_plan_.push, cache_plan_.take_groups);
  if (selection().sparse_step)
    step_.run();
  else
    be_->dispatch(*gather_, stages_.gather, stages_.gather_groups);
  for (const kv::MergePush& pass : merge_plan_.passes) be_->dispatch(*merge_, pass, merge_plan_.groups);
}

}  // namespace attnbench::vulkan
