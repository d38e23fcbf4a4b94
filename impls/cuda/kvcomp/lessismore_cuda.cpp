// lessismore on CUDA (variant "ranks"): each KV head's group logits over the candidates, each query
// head's top k by the family's select, ranked by a bitonic sort, one merged key per candidate per
// sequence scored −key (lessismore.cu, lessismore_common.h); then the family's select and the
// decode step over the kept set (scored_selection_cuda.h, selection-only).
#include <algorithm>

#include "../runtime/cuda_check.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "key_lanes.h"
#include "lessismore_launch.h"
#include "scored_selection_cuda.h"

namespace attnbench::cuda {
namespace {

class CudaLessismore final : public CudaScoredSelection {
  static int64_t blocks(const kvcomp::SelectionParams& s) {
    const int64_t per_block = lessismore::kThreads / kv::key_lanes(s);
    return (s.candidates + per_block - 1) / per_block;
  }

  std::string unsupported(const Case& c, const DeviceLimits& limits) const override {
    if (!elem_of(c.dtype)) return cat(dtype_name(c.dtype), ": lessismore on cuda takes f32, f16 or bf16");
    const kvcomp::SelectionParams s = kvcomp::selection_params(c);
    if (std::string why = kvcomp::lessismore_unsupported(s); !why.empty()) return why;
    if (s.head_dim > lessismore::kQueryFloats)
      return cat("the logits kernel stages a query of head_dim ", s.head_dim, " in ", lessismore::kQueryFloats, " floats");
    const int64_t heads = int64_t{s.batch} * s.q_heads, width = kvcomp::lessismore_width(s), limit = (int64_t{1} << 31) - 1;
    const int64_t grids[] = {kvcomp::cache_rows(s) * blocks(s), heads,
                             heads * std::max<int64_t>(1, width / lessismore::kSortTile),
                             (heads * width / 2 + lessismore::kThreads - 1) / lessismore::kThreads};
    if (*std::max_element(std::begin(grids), std::end(grids)) > limit)
      return cat("the scorer's kernels need more than 2^31 − 1 CTAs in one grid");
    // The workspaces: the logits of every head, and above one tile the sort's pairs.
    const uint64_t bytes = std::max(uint64_t(heads) * s.candidates, width > lessismore::kSortTile ? uint64_t(heads) * width : 0) * 4;
    if (limits.max_buffer_bytes && bytes > limits.max_buffer_bytes)
      return cat("a workspace of ", bytes, " bytes exceeds the device's ", limits.max_buffer_bytes, "-byte buffer limit");
    return {};
  }

  void prepare_scores(const Case& c, CudaBackend& be, const IoBuffers& io) override {
    elem_ = *elem_of(c.dtype);
    const kvcomp::SelectionParams& s = selection();
    const int64_t heads = int64_t{s.batch} * s.q_heads, width = kvcomp::lessismore_width(s);
    const auto allocate = [&](int64_t n, const char* name) { return be.allocator().allocate(std::max<int64_t>(1, n) * 4, name); };
    logits_ = allocate(heads * s.candidates, "lessismore.logits");
    top_ = allocate(heads * s.top_k, "lessismore.top");
    top_len_ = allocate(heads, "lessismore.top_len");
    const int64_t pairs = width > lessismore::kSortTile ? heads * width : 0;
    sort_key_ = allocate(pairs, "lessismore.sort_key");
    sort_idx_ = allocate(pairs, "lessismore.sort_idx");
    merged_ = allocate(int64_t{s.batch} * s.candidates, "lessismore.merged");
    args_ = {s,
             io["q"].ptr(),
             io["k"].ptr(),
             logits_->ptr<float>(),
             top_->ptr<int32_t>(),
             top_len_->ptr<int32_t>(),
             sort_key_->ptr<float>(),
             sort_idx_->ptr<int32_t>(),
             merged_->ptr<int32_t>(),
             scores(),
             kv::key_lanes(s),
             std::min({s.group, lessismore::kStageHeads, lessismore::kQueryFloats / s.head_dim}),
             static_cast<int>(blocks(s))};
  }

  void score(cudaStream_t stream) override { ATTNBENCH_CUDA_CHECK(lessismore::score_launch(elem_, args_, stream)); }

  attn::Elem elem_ = attn::Elem::f32;
  lessismore::Args args_{};
  BufferPtr logits_, top_, top_len_, sort_key_, sort_idx_, merged_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaLessismore, "lessismore", "cuda", "ranks");
