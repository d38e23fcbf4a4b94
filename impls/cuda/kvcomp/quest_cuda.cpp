// quest on CUDA (variant "pages"): every KV head's page bounds from its summaries and its group's
// decode queries (quest.cu), one score per candidate token; then the family's select and the
// decode step over the kept pages (scored_selection_cuda.h, selection-only).
#include <algorithm>

#include "../runtime/cuda_check.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "key_lanes.h"
#include "quest_launch.h"
#include "scored_selection_cuda.h"

namespace attnbench::cuda {
namespace {

class CudaQuest final : public CudaScoredSelection {
  // A page's lanes: one per 16-byte word of a summary row (key_lanes.h).
  static int lanes(const kvcomp::SelectionParams& s) { return kv::key_lanes(s); }
  static int64_t blocks(const kvcomp::SelectionParams& s, const kvcomp::QuestParams& m) {
    const int64_t per_block = quest::kThreads / lanes(s);
    return (kvcomp::quest_scored_pages(s, m) + per_block - 1) / per_block;
  }

  std::string unsupported(const Case& c, const DeviceLimits&) const override {
    if (!elem_of(c.dtype)) return cat(dtype_name(c.dtype), ": quest on cuda takes f32, f16 or bf16");
    const kvcomp::SelectionParams s = kvcomp::selection_params(c);
    const int64_t grid = kvcomp::cache_rows(s) * blocks(s, kvcomp::quest_params(c));
    if (grid >= (int64_t{1} << 31)) return cat("the bounds kernel needs ", grid, " CTAs; CUDA allows 2^31 − 1");
    return {};
  }

  void prepare_scores(const Case& c, CudaBackend&, const IoBuffers& io) override {
    elem_ = *elem_of(c.dtype);
    const kvcomp::SelectionParams& s = selection();
    const kvcomp::QuestParams m = kvcomp::quest_params(c);
    args_ = {s, m, io["q"].ptr(), io["kmin"].ptr(), io["kmax"].ptr(), scores(), lanes(s),
             std::min(s.group, quest::kQueryFloats / s.head_dim), static_cast<int>(blocks(s, m))};
  }

  void score(cudaStream_t stream) override { ATTNBENCH_CUDA_CHECK(quest::bounds_launch(elem_, args_, stream)); }

  attn::Elem elem_ = attn::Elem::f32;
  quest::Args args_{};
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaQuest, "quest", "cuda", "pages");
