#include "scored_selection_cpu.h"

#include <algorithm>

#include "attnbench/error.h"
#include "reference/kvcomp/sparse_step.h"

namespace attnbench::cpu {

namespace {
// Below this many bytes of compacted cache the caller copies alone: waking the pool costs more
// than it saves (25 µs alone against 235 µs, cv 124%, for a 256 KiB cache on a busy 2-thread machine).
constexpr size_t kParallelBytes = size_t{1} << 20;
}  // namespace

void CpuScoredSelection::prepare(const Case& c, Backend& backend, const IoBuffers& io) {
  cpu_ = &as_cpu(backend);
  pool_ = &cpu_->pool();
  s_ = kvcomp::selection_params(c);
  scoring_ = kvcomp::scores_needed(c);
  k_ = io["k"].ptr();
  v_ = io["v"].ptr();
  kept_idx_ = io["kept_idx"].ptr<int32_t>();
  kept_len_ = io["kept_len"].ptr<int32_t>();
  Allocator& alloc = backend.allocator();
  if (s_.sparse_step) {
    step_lse_ = alloc.allocate(int64_t{s_.batch} * s_.q_heads * sizeof(float), "sparse_step.lse");
    attn::StageIo sio{io["q"].ptr(), k_, v_, kept_len_, io["O"].ptr(), step_lse_->ptr<float>(), nullptr};
    sio.key_idx = kept_idx_;
    step_.prepare(kvcomp::sparse_step_params(s_), c.dtype, sio, *cpu_);
    cache_ = kvcomp::selection_cache_on(c);
    dtype_ = c.dtype;
    if (cache_) {
      cache_threshold_ = kvcomp::selection_cache_threshold(c);
      q_ = io["q"].ptr();
      q_cached_ = io["q_cached"].ptr();
      topk_cached_ = io["topk_cached"].ptr<int32_t>();
      cache_hit_ = io["cache_hit"].ptr<int32_t>();
    }
  } else {
    k_kept_ = io["k_kept"].ptr();
    v_kept_ = io["v_kept"].ptr();
    merged_ = kvcomp::merged_slots(c);
    dtype_ = c.dtype;
    if (merged_ > 0) {
      k_merged_ = io["k_merged"].ptr();
      v_merged_ = io["v_merged"].ptr();
      w_merged_ = io["w_merged"].ptr<float>();
    }
  }
  const int64_t C = std::max<int32_t>(1, s_.candidates);
  scores_ = alloc.allocate(kvcomp::score_rows(s_) * C * sizeof(float), "selection.scores");
  row_budget_ = alloc.allocate(kvcomp::cache_rows(s_) * sizeof(int32_t), "selection.row_budget");
  const std::vector<int32_t> planned = kvcomp::planned_row_budgets(c);
  std::copy(planned.begin(), planned.end(), row_budget());
  if (s_.across_heads && scoring_) {  // per thread: the choice's indices and boosted scores
    across_words_ = kv::across_scratch_ints(s_) + static_cast<size_t>(s_.kv_heads) * s_.candidates + 16;
    across_ = alloc.allocate(across_words_ * pool_->size() * sizeof(int32_t), "selection.across_heads");
  }
  if (scoring_) prepare_scores(c, *cpu_, io);
  // Per thread: the selection's two index arrays, or the pooling's floats.
  const size_t pooling = pool_radius_ < 0 ? 0 : kv::pool_scratch_floats(C, pool_radius_);
  scratch_words_ = std::max<size_t>(std::max<size_t>(2 * C, pooling), merged_ > 0 ? s_.head_dim : 0) + 16;
  scratch_ = alloc.allocate(scratch_words_ * pool_->size() * sizeof(float), "selection.scratch");
}

void CpuScoredSelection::pool_into_scores(const float* raw, int32_t mode) {
  ATTNBENCH_ASSERT(pool_radius_ >= 0, "pool_into_scores() without reserve_pooling() in prepare_scores()");
  const int64_t radius = pool_radius_, heads = kvcomp::heads_per_score_row(s_);
  const kv::PoolKernels& kernels = cpu_->kernels<kv::PoolKernels>();
  float* scratch = scratch_->ptr<float>();
  pool_->parallel_for_slots(kvcomp::score_rows(s_), [&](int64_t begin, int64_t end, unsigned slot) {
    for (int64_t row = begin; row < end; ++row)
      kernels.pool_group(raw, s_.candidates, heads, radius, mode, row, scratch + slot * scratch_words_,
                         scores() + row * s_.candidates);
  });
}

void CpuScoredSelection::run() {
  const int64_t rows = kvcomp::cache_rows(s_);
  bool every_row_hits = false;
  if (cache_) {  // the cosines first: a step whose every row hits scores nothing
    const int64_t n = int64_t{kvcomp::heads_per_score_row(s_)} * s_.head_dim;
    const size_t bytes = static_cast<size_t>(n) * s_.elem_bytes;
    every_row_hits = true;
    for (int64_t r = 0; r < kvcomp::score_rows(s_); ++r) {
      const float cos = kv::cache_cosine(static_cast<const char*>(q_) + r * bytes, static_cast<const char*>(q_cached_) + r * bytes, dtype_, n);
      cache_hit_[r] = cos >= cache_threshold_ ? 1 : 0;
      every_row_hits = every_row_hits && cache_hit_[r];
    }
  }
  if (scoring_ && !every_row_hits) score();
  if (scoring_ && s_.across_heads) {
    int32_t* words = across_->ptr<int32_t>();
    const size_t ints = kv::across_scratch_ints(s_);
    pool_->parallel_for_slots(s_.batch, [&](int64_t begin, int64_t end, unsigned slot) {
      int32_t* mine = words + slot * across_words_;
      for (int64_t b = begin; b < end; ++b)
        kv::budgets_across_heads(s_, scores(), b, mine, reinterpret_cast<float*>(mine + ints), row_budget());
    });
  }
  auto* scratch = scratch_->ptr<int32_t>();
  const auto select = [&](int64_t row, unsigned slot) {
    kv::select_row(s_, scores(), row_budget(), row, scratch + slot * scratch_words_, kept_idx_, kept_len_);
  };
  if (s_.sparse_step) {
    pool_->parallel_for_slots(rows, [&](int64_t begin, int64_t end, unsigned slot) {
      for (int64_t row = begin; row < end; ++row) {
        if (cache_ && cache_hit_[kvcomp::score_row_of(s_, row)]) {
          kv::take_cached_row(s_, topk_cached_, row, kept_idx_);
          kept_len_[row] = s_.kept;
        } else {
          select(row, slot);
        }
      }
    });
    step_.run();
    return;
  }
  // Tasks are (row, K or V) pairs, twice the rows, so a small batch still spreads over the threads.
  const auto gather = [&](int64_t task) {
    const bool v = task % 2 != 0;
    kv::gather_row(s_, kept_idx_, kept_len_, v ? v_ : k_, v ? v_kept_ : k_kept_, task / 2);
  };
  const size_t bytes = static_cast<size_t>(2 * rows * s_.capacity) * s_.head_dim * s_.elem_bytes;
  if (!scoring_ && bytes < kParallelBytes && merged_ == 0) {
    for (int64_t row = 0; row < rows; ++row) select(row, 0);
    for (int64_t task = 0; task < 2 * rows; ++task) gather(task);
    return;
  }
  pool_->parallel_for_slots(rows, [&](int64_t begin, int64_t end, unsigned slot) {
    for (int64_t row = begin; row < end; ++row) select(row, slot);
  });
  // The gathers and, for a merging method, the merges of the same (row, K or V) tasks.
  pool_->parallel_for_slots(2 * rows, [&](int64_t begin, int64_t end, unsigned slot) {
    for (int64_t task = begin; task < end; ++task) {
      gather(task);
      if (merged_ == 0) continue;
      const bool v = task % 2 != 0;
      kv::merge_row(s_, merged_, dtype_, kept_idx_, kept_len_, v ? v_ : k_, v ? v_merged_ : k_merged_, v ? nullptr : w_merged_,
                    task / 2, reinterpret_cast<float*>(scratch + slot * scratch_words_));
    }
  });
}

}  // namespace attnbench::cpu
