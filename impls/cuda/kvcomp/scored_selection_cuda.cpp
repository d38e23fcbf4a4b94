#include "scored_selection_cuda.h"

#include <algorithm>

#include "../runtime/cuda_check.h"
#include "attnbench/error.h"

namespace attnbench::cuda {

std::string CudaScoredSelection::stages_unsupported(const kvcomp::SelectionParams& s, const DeviceLimits&) const {
  const int64_t grid = kv::stages_grid(s), grid_limit = (int64_t{1} << 31) - 1;
  if (grid > grid_limit) return cat("the selection stages need ", grid, " CTAs in one grid; CUDA allows ", grid_limit);
  return {};
}

void CudaScoredSelection::prepare(const Case& c, Backend& backend, const IoBuffers& io) {
  CudaBackend& be = as_cuda(backend);
  stream_ = be.stream();
  const kvcomp::SelectionParams s = kvcomp::selection_params(c);
  scores_ = be.allocator().allocate(std::max<size_t>(4, kvcomp::score_rows(s) * size_t(s.candidates) * sizeof(float)),
                                    "selection.scores");
  row_budget_ = be.allocator().allocate(kvcomp::cache_rows(s) * sizeof(int32_t), "selection.row_budget");
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
  if (kvcomp::scores_needed(s)) prepare_scores(c, be, io);
}

void CudaScoredSelection::pool_into_scores(const float* raw, int radius, bool is_max, cudaStream_t stream) {
  kv::StageArgs a = args_;
  a.raw = raw;
  a.pool_radius = radius;
  a.pool_max = is_max;
  ATTNBENCH_CUDA_CHECK(kv::pool_launch(a, stream));
}

void CudaScoredSelection::run() {
  check_not_lost();
  if (kvcomp::scores_needed(args_.sel)) score(stream_);
  ATTNBENCH_CUDA_CHECK(kv::select_launch(args_, stream_));
  ATTNBENCH_CUDA_CHECK(kv::gather_launch(args_, stream_));
}

}  // namespace attnbench::cuda
