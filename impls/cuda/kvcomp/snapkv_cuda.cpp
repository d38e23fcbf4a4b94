// snapkv on CUDA (variant "radix"): everything on the device, six kernels on the backend's stream
// (snapkv_launch.h; semantics: reference/kvcomp/snapkv.cpp):
//   stats -> combine   each window query's softmax max and sum over all its visible keys
//   scores             the window's mean softmax of each prefix key, per query head
//   pool               pooling along the keys and the mean over the group
//   select             top (budget − w) by the tie rule, indices ascending, then the window
//   gather             k_kept, v_kept at the kept indices, zeros beyond
// When the window or the budget covers the sequence (keep everything), or the budget is the
// window alone, only select and gather run. Workspaces are allocated in prepare(); run() only
// enqueues.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "reference/kvcomp/snapkv_common.h"
#include "snapkv_launch.h"

namespace attnbench::cuda {
namespace {

using snapkv::Elem;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool scoring(const kvcomp::SnapkvShape& s) { return !s.keep_all() && s.top_k() > 0; }

// Key splits of the statistics pass: enough CTAs for every resident slot of the GPU, at least one
// key tile each.
int stats_splits(const kvcomp::SnapkvShape& s, int64_t slots) {
  const int64_t groups = s.batch * s.kv_heads, tiles = ceil_div(s.kv_len, snapkv::kKeysPerTile);
  return static_cast<int>(std::clamp<int64_t>(ceil_div(slots, groups), 1, std::min<int64_t>(tiles, snapkv::kMaxSplits)));
}

// Workspace sizes in floats (0 when nothing is scored).
struct Workspace {
  int64_t partials = 0;  // each of part_m, part_l
  int64_t rows = 0;      // each of row_m, row_inv_l
  int64_t a = 0, score = 0;
  // The largest buffer, named for a refusal.
  std::pair<int64_t, const char*> largest() const {
    if (partials >= a && partials >= score) return {partials, "the per-split softmax statistics"};
    return a >= score ? std::pair<int64_t, const char*>{a, "the window's scores of every prefix key, per query head"}
                      : std::pair<int64_t, const char*>{score, "the pooled scores"};
  }
};
Workspace workspace(const kvcomp::SnapkvShape& s, int splits) {
  Workspace ws;
  if (!scoring(s)) return ws;
  ws.rows = s.batch * s.q_heads * s.obs_window;
  ws.partials = splits * ws.rows;
  ws.a = s.batch * s.q_heads * s.prefix();
  ws.score = s.batch * s.kv_heads * s.prefix();
  return ws;
}

class CudaSnapkv final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const kvcomp::SnapkvShape s = kvcomp::snapkv_shape(c);
    if (!elem_of(c.dtype)) return Support::no(cat(dtype_name(c.dtype), ": snapkv on cuda takes f32, f16 or bf16"));
    // Every CTA index is one unsigned grid x (< 2^31 by the launch limits).
    const int64_t groups = s.batch * s.kv_heads, grid_limit = (int64_t{1} << 31) - 1;
    const int64_t largest_grid =
        std::max({groups * ceil_div(std::max<int64_t>(s.prefix(), 1), snapkv::kKeysPerTile),
                  groups * ceil_div(std::max<int64_t>(s.prefix(), 1), snapkv::kPoolThreads),
                  groups * ceil_div(s.budget, snapkv::kGatherRows)});
    if (largest_grid > grid_limit)
      return Support::no(cat("batch·kv_heads=", groups, " with kv_len=", s.kv_len, " and budget=", s.budget,
                             " needs ", largest_grid, " CTAs in one grid; CUDA allows ", grid_limit));
    if (limits.shared_mem_bytes && snapkv::kScoresSmem > limits.shared_mem_bytes)
      return Support::no(cat("the scores kernel needs ", snapkv::kScoresSmem, " bytes of shared memory per block; the device allows ",
                             limits.shared_mem_bytes));
    const Workspace ws = workspace(s, stats_splits(s, int64_t{4} * std::max<uint32_t>(1, limits.compute_units)));
    const auto [floats, what] = ws.largest();
    const uint64_t bytes = static_cast<uint64_t>(floats) * sizeof(float);
    if (limits.max_buffer_bytes && bytes > limits.max_buffer_bytes)
      return Support::no(cat("a workspace of ", bytes, " bytes (", what, ") exceeds the device's ", limits.max_buffer_bytes,
                             "-byte buffer limit"));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const kvcomp::SnapkvShape s = kvcomp::snapkv_shape(c);
    const std::optional<Elem> elem = elem_of(c.dtype);
    ATTNBENCH_ASSERT(elem, "prepare() of a case supports() refused: ", c.id());
    elem_ = *elem;

    snapkv::Params& p = params_;
    p = snapkv::Params{};
    p.q_obs = io["q_obs"].ptr();
    p.k = io["k"].ptr();
    p.v = io["v"].ptr();
    p.kept_idx = io["kept_idx"].ptr<int32_t>();
    p.kept_len = io["kept_len"].ptr<int32_t>();
    p.k_kept = io["k_kept"].ptr();
    p.v_kept = io["v_kept"].ptr();
    p.batch = static_cast<int>(s.batch);
    p.q_heads = static_cast<int>(s.q_heads);
    p.kv_heads = static_cast<int>(s.kv_heads);
    p.group = static_cast<int>(s.group());
    p.head_dim = static_cast<int>(s.head_dim);
    p.kv_len = static_cast<int>(s.kv_len);
    p.obs_window = static_cast<int>(s.obs_window);
    p.prefix = static_cast<int>(s.prefix());
    p.budget = static_cast<int>(s.budget);
    p.top_k = static_cast<int>(s.top_k());
    p.kept = static_cast<int>(s.kept());
    p.keep_all = s.keep_all();
    p.pool = s.pool == kvcomp::Pool::max ? snapkv::Pool::max : snapkv::Pool::avg;
    p.pool_radius = static_cast<int>((s.pool_kernel - 1) / 2);
    p.elem_bytes = static_cast<int>(dtype_size(c.dtype));
    p.scale = static_cast<float>(s.scale());
    p.splits = 1;
    if (!scoring(s)) return;

    int stats_per_sm = 0, scores_per_sm = 0;
    switch (elem_) {
      case Elem::f32: ATTNBENCH_CUDA_CHECK(snapkv::logits_configure<Elem::f32>(&stats_per_sm, &scores_per_sm)); break;
      case Elem::f16: ATTNBENCH_CUDA_CHECK(snapkv::logits_configure<Elem::f16>(&stats_per_sm, &scores_per_sm)); break;
      case Elem::bf16: ATTNBENCH_CUDA_CHECK(snapkv::logits_configure<Elem::bf16>(&stats_per_sm, &scores_per_sm)); break;
    }
    if (stats_per_sm < 1 || scores_per_sm < 1)
      throw BackendError("cuda: the snapkv logits kernels cannot be resident on an SM");
    p.splits = stats_splits(s, static_cast<int64_t>(be.props().multiProcessorCount) * stats_per_sm);
    const Workspace ws = workspace(s, p.splits);
    Allocator& alloc = be.allocator();
    const auto floats = [&](int64_t n, const char* name) { return alloc.allocate(static_cast<size_t>(n) * sizeof(float), name); };
    part_m_ = floats(ws.partials, "snapkv.part_m");
    part_l_ = floats(ws.partials, "snapkv.part_l");
    row_m_ = floats(ws.rows, "snapkv.row_m");
    row_inv_l_ = floats(ws.rows, "snapkv.row_inv_l");
    a_ = floats(ws.a, "snapkv.window_scores");
    score_ = floats(ws.score, "snapkv.scores");
    p.part_m = part_m_->ptr<float>();
    p.part_l = part_l_->ptr<float>();
    p.row_m = row_m_->ptr<float>();
    p.row_inv_l = row_inv_l_->ptr<float>();
    p.a = a_->ptr<float>();
    p.score = score_->ptr<float>();
  }

  void run() override {
    check_not_lost();
    const snapkv::Params& p = params_;
    if (p.part_m) {
      switch (elem_) {
        case Elem::f32: ATTNBENCH_CUDA_CHECK(snapkv::stats_launch<Elem::f32>(p, stream_)); break;
        case Elem::f16: ATTNBENCH_CUDA_CHECK(snapkv::stats_launch<Elem::f16>(p, stream_)); break;
        case Elem::bf16: ATTNBENCH_CUDA_CHECK(snapkv::stats_launch<Elem::bf16>(p, stream_)); break;
      }
      ATTNBENCH_CUDA_CHECK(snapkv::combine_launch(p, stream_));
      switch (elem_) {
        case Elem::f32: ATTNBENCH_CUDA_CHECK(snapkv::scores_launch<Elem::f32>(p, stream_)); break;
        case Elem::f16: ATTNBENCH_CUDA_CHECK(snapkv::scores_launch<Elem::f16>(p, stream_)); break;
        case Elem::bf16: ATTNBENCH_CUDA_CHECK(snapkv::scores_launch<Elem::bf16>(p, stream_)); break;
      }
      ATTNBENCH_CUDA_CHECK(snapkv::pool_launch(p, stream_));
    }
    ATTNBENCH_CUDA_CHECK(snapkv::select_launch(p, stream_));
    ATTNBENCH_CUDA_CHECK(snapkv::gather_launch(p, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  Elem elem_ = Elem::f32;
  snapkv::Params params_{};
  BufferPtr part_m_, part_l_, row_m_, row_inv_l_, a_, score_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkv, "snapkv", "cuda", "radix");
