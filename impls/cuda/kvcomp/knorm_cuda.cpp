// knorm on CUDA (variant "norms"): the key norms (knorm.cu), then the family's selection and
// gather (scored_selection_cuda.h).
#include "../runtime/cuda_check.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "knorm_launch.h"
#include "scored_selection_cuda.h"

namespace attnbench::cuda {
namespace {

class CudaKnorm final : public CudaScoredSelection {
  std::string unsupported(const Case& c, const DeviceLimits&) const override {
    const kvcomp::SelectionParams s = kvcomp::selection_params(c);
    if (!elem_of(c.dtype)) return cat(dtype_name(c.dtype), ": knorm on cuda takes f32, f16 or bf16");
    if (kvcomp::cache_rows(s) * s.candidates * 32 / knorm::kThreads >= (int64_t{1} << 31))
      return "the score kernel needs more than 2^31 − 1 CTAs";
    return {};
  }

  void prepare_scores(const Case& c, CudaBackend&, const IoBuffers& io) override {
    elem_ = *elem_of(c.dtype);
    const kvcomp::SelectionParams& s = selection();
    const int per_word = 16 / s.elem_bytes, words = (s.head_dim + per_word - 1) / per_word;
    int lanes = 1;
    while (lanes < 32 && lanes < words) lanes *= 2;
    args_ = {s, io["k"].ptr(), scores(), lanes};
  }

  void score(cudaStream_t stream) override { ATTNBENCH_CUDA_CHECK(knorm::scores_launch(elem_, args_, stream)); }

  attn::Elem elem_ = attn::Elem::f32;
  knorm::Args args_{};
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaKnorm, "knorm", "cuda", "norms");
