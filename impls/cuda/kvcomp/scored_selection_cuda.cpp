// The KV-selection family's base on CUDA (scored_selection_cuda.h): its stages around a method's scorer.
#include "scored_selection_cuda.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "../runtime/cuda_check.h"
#include "../runtime/cuda_stream.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "reference/kvcomp/sparse_step.h"

namespace attnbench::cuda {

namespace {

// The variant that runs a selection-only case's decode step (gather_decode's, per-head lists): the
// tensor cores where they take it, else the CUDA cores; none when neither does (its reason).
std::optional<AttentionVariant> step_variant(const kvcomp::SelectionParams& s, DType dtype, const DeviceLimits& limits,
                                             std::string* why = nullptr) {
  const attention::AttentionParams a = kvcomp::sparse_step_params(s);
  if (AttentionStage::supports(AttentionVariant::mma, a, dtype, true, limits).ok) return AttentionVariant::mma;
  const Support general = AttentionStage::supports(AttentionVariant::general, a, dtype, true, limits);
  if (general.ok) return AttentionVariant::general;
  if (why) *why = general.reason;
  return std::nullopt;
}

}  // namespace

std::string CudaScoredSelection::step_unsupported(const Case& c, const DeviceLimits& limits) const {
  std::string why;
  if (step_variant(kvcomp::selection_params(c), c.dtype, limits, &why)) return {};
  return cat("the decode step over the kept set: ", why);
}

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
  be_ = &be;
  stream_ = be.stream();
  const kvcomp::SelectionParams s = kvcomp::selection_params(c);
  scoring_ = kvcomp::scores_needed(c);
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
  step_lse_.reset();
  if (s.sparse_step) {  // no compacted copy: the step reads the kept keys in place
    const std::optional<AttentionVariant> variant = step_variant(s, c.dtype, be.probe().limits);
    ATTNBENCH_ASSERT(variant, "prepare() of a decode step supports() refused");
    step_lse_ = allocate(size_t(s.batch) * s.q_heads * sizeof(float), "sparse_step.lse");
    AttentionBuffers b;
    b.q = io["q"].ptr();
    b.k = io["k"].ptr();
    b.v = io["v"].ptr();
    b.kv_len = io["kept_len"].ptr<int32_t>();
    b.o = io["O"].ptr();
    b.lse = step_lse_->ptr<float>();
    b.key_idx = io["kept_idx"].ptr<int32_t>();
    step_.prepare(*variant, kvcomp::sparse_step_params(s), c.dtype, true, be, b, "sparse_step");
  } else {
    args_.k_kept = io["k_kept"].ptr();
    args_.v_kept = io["v_kept"].ptr();
  }
  cache_ = kv::CacheArgs{};
  cache_hits_.clear();
  if (s.sparse_step && kvcomp::selection_cache_on(c)) {  // a selection-only method's cache alone
    const std::optional<attn::Elem> elem = elem_of(c.dtype);
    if (!elem) throw BackendError(cat("cuda: the selection cache takes f32, f16 or bf16, not ", dtype_name(c.dtype)));
    ATTNBENCH_ASSERT(!s.row_budgets, "the selection cache keeps sel.kept in every row: no per-row budgets");
    cache_.q = io["q"].ptr();
    cache_.q_cached = io["q_cached"].ptr();
    cache_.topk_cached = io["topk_cached"].ptr<int32_t>();
    cache_.cache_hit = io["cache_hit"].ptr<int32_t>();
    cache_.threshold = kvcomp::selection_cache_threshold(c);
    cache_.elem = *elem;
    cache_hits_.assign(static_cast<size_t>(kvcomp::score_rows(s)), 0);
  }
  merge_ = kv::MergeArgs{};
  if (const int64_t slots = s.sparse_step ? 0 : kvcomp::merged_slots(c); slots > 0) {
    const std::optional<attn::Elem> elem = elem_of(c.dtype);
    if (!elem) throw BackendError(cat("cuda: the merge stage takes f32, f16 or bf16, not ", dtype_name(c.dtype)));
    merge_.slots = static_cast<int32_t>(slots);
    merge_.elem = *elem;
    merge_.k_merged = io["k_merged"].ptr();
    merge_.v_merged = io["v_merged"].ptr();
    merge_.w_merged = io["w_merged"].ptr<float>();
  }
  across_ = kv::AcrossArgs{};
  floor_idx_.reset();
  boosted_.reset();
  across_idx_.reset();
  across_lens_.reset();
  if (s.across_heads && scoring_) {
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
  if (scoring_) prepare_scores(c, be, io);
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
  bool every_row_hits = false;
  if (cache_.cache_hit) {
    // The cosines first, and the decision on the host: the one synchronising copy of run(). A
    // cold sample enqueues its launches behind the backend's stream hold, which would keep this
    // copy waiting until the hold timed out: the hold is let go first (its start event is queued
    // behind it, so the sample still times this step from the cosine on; the launches after the
    // copy are enqueued with the stream idle, as the authors' own step is).
    ATTNBENCH_CUDA_CHECK(kv::cache_hit_launch(args_, cache_, stream_));
    be_->release_stream();
    copy_and_wait(cache_hits_.data(), cache_.cache_hit, cache_hits_.size() * sizeof(int32_t), cudaMemcpyDeviceToHost, stream_);
    every_row_hits = std::all_of(cache_hits_.begin(), cache_hits_.end(), [](int32_t h) { return h != 0; });
  }
  if (!every_row_hits) {  // otherwise the take writes every row
    if (scoring_) score(stream_);
    if (scoring_ && args_.sel.across_heads) ATTNBENCH_CUDA_CHECK(kv::across_launch(args_, across_, stream_));
    ATTNBENCH_CUDA_CHECK(kv::select_launch(args_, stream_));
  }
  if (cache_.cache_hit) ATTNBENCH_CUDA_CHECK(kv::cache_take_launch(args_, cache_, stream_));
  if (args_.sel.sparse_step)
    step_.enqueue(stream_);
  else
    ATTNBENCH_CUDA_CHECK(kv::gather_launch(args_, stream_));
  if (merge_.slots > 0) ATTNBENCH_CUDA_CHECK(kv::merge_launch(args_, merge_, stream_));
}

}  // namespace attnbench::cuda
