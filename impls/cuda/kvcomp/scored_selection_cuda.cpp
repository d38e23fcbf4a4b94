// The KV-selection family's base on CUDA (scored_selection_cuda.h): its stages around a method's scorer.
#include "scored_selection_cuda.h"

#include <algorithm>
#include <vector>

#include "../runtime/cuda_check.h"
#include "../runtime/cuda_stream.h"
#include "attnbench/error.h"

namespace attnbench::cuda {

std::string CudaScoredSelection::stages_unsupported(const kvcomp::SelectionParams& s, const DeviceLimits&) const {
  const int64_t grid = kv::stages_grid(s), grid_limit = (int64_t{1} << 31) - 1;
  if (grid > grid_limit) return cat("the selection stages need ", grid, " CTAs in one grid; CUDA allows ", grid_limit);
  // The across stage selects over one row of kv_heads·candidates per sequence, indexed in int.
  const int64_t across = int64_t{s.kv_heads} * s.candidates;
  if (s.across_heads && across > grid_limit - kv::kSelectThreads)
    return cat("the choice across heads ranks ", across, " candidates per sequence; the select kernel takes at most ",
               grid_limit - kv::kSelectThreads);
  return {};
}

void CudaScoredSelection::prepare(const Case& c, Backend& backend, const IoBuffers& io) {
  CudaBackend& be = as_cuda(backend);
  stream_ = be.stream();
  const kvcomp::SelectionParams s = kvcomp::selection_params(c);
  const int64_t rows = kvcomp::cache_rows(s);
  const auto allocate = [&](size_t bytes, const char* name) { return be.allocator().allocate(std::max<size_t>(4, bytes), name); };
  scores_ = allocate(kvcomp::score_rows(s) * size_t(s.candidates) * sizeof(float), "selection.scores");
  row_budget_ = allocate(rows * sizeof(int32_t), "selection.row_budget");
  // Per-row budgets are a plan of the case (or, across heads, the forced tokens until the across
  // stage counts the rest): uploaded once, before any run reads them.
  const std::vector<int32_t> planned = kvcomp::planned_row_budgets(c);
  if (!planned.empty()) {
    ATTNBENCH_ASSERT(static_cast<int64_t>(planned.size()) == rows, "planned_row_budgets: ", planned.size(),
                     " budgets for ", rows, " rows");
    copy_and_wait(row_budget_->ptr(), planned.data(), planned.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream_);
  }
  args_ = kv::StageArgs{};
  args_.sel = s;
  args_.scores = scores_->ptr<float>();
  args_.row_budget = row_budget_->ptr<int32_t>();
  args_.kept_idx = io["kept_idx"].ptr<int32_t>();
  args_.kept_len = io["kept_len"].ptr<int32_t>();
  args_.k = io["k"].ptr();
  args_.v = io["v"].ptr();
  args_.k_kept = io["k_kept"].ptr();
  args_.v_kept = io["v_kept"].ptr();
  across_ = kv::AcrossArgs{};
  floor_idx_.reset();
  boosted_.reset();
  across_idx_.reset();
  across_lens_.reset();
  if (s.across_heads && kvcomp::scores_needed(s)) {
    if (s.floor > 0) {  // with no floor the choice ranks the scores as they are
      floor_idx_ = allocate(rows * size_t(s.floor) * sizeof(int32_t), "selection.floor_idx");
      boosted_ = allocate(rows * size_t(s.candidates) * sizeof(float), "selection.boosted");
      across_.floor_idx = floor_idx_->ptr<int32_t>();
      across_.boosted = boosted_->ptr<float>();
    }
    across_idx_ = allocate(rows * size_t(s.top_k) * sizeof(int32_t), "selection.across_idx");
    across_lens_ = allocate(rows * sizeof(int32_t), "selection.across_lens");
    across_.across_idx = across_idx_->ptr<int32_t>();
    across_.lens = across_lens_->ptr<int32_t>();
  }
  if (kvcomp::scores_needed(s)) prepare_scores(c, be, io);
}

void CudaScoredSelection::pool_into_scores(const float* raw, int radius, int32_t mode, cudaStream_t stream) {
  kv::StageArgs a = args_;
  a.raw = raw;
  a.pool_radius = radius;
  a.pool_mode = mode;
  ATTNBENCH_CUDA_CHECK(kv::pool_launch(a, stream));
}

void CudaScoredSelection::run() {
  check_not_lost();
  const bool scoring = kvcomp::scores_needed(args_.sel);
  if (scoring) score(stream_);
  if (scoring && args_.sel.across_heads) ATTNBENCH_CUDA_CHECK(kv::across_launch(args_, across_, stream_));
  ATTNBENCH_CUDA_CHECK(kv::select_launch(args_, stream_));
  ATTNBENCH_CUDA_CHECK(kv::gather_launch(args_, stream_));
}

}  // namespace attnbench::cuda
