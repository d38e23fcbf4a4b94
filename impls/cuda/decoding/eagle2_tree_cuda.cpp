// eagle2_tree on CUDA (variant "radix"): eagle2_tree_cuda.cu's two kernels — a CTA per row of draft
// logits for its top k and log-softmax values (two passes: the threads' maxima for a floor, then
// the exps summed in fp64 while the few logits above the floor are gathered; a radix selection
// when planted ties crowd it), then a CTA per tree for the frontiers, the selection (radix) and the
// tree in creation order — and tree_mask's CUDA stage over the parents they write. The plan, fixed in prepare(): 256 threads a CTA, static
// shared memory, at most kWaves waves of the CTAs the occupancy API puts on the device.
#include <algorithm>
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "eagle2_tree_launch.h"

namespace attnbench::cuda {
namespace {

class CudaEagle2Tree final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const decoding::Eagle2Params s = decoding::eagle2_params(c);
    if (s.top_k > eagle2::kMaxTopK || s.depth > eagle2::kMaxDepth)
      return Support::no("the kernels' shared arrays hold top_k up to 32 and depth up to 16 (the schema's bounds)");
    return stage_supports(decoding::eagle2_mask_case(c), "cuda", limits);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const decoding::Eagle2Params s = decoding::eagle2_params(c);
    top_ = backend.allocator().allocate(static_cast<size_t>(s.batch) * s.slots * s.top_k * 8, "eagle2_tree.top");
    params_ = eagle2::Params{s,
                             io["draft_logits"].ptr<float>(),
                             io["root_token"].ptr<int32_t>(),
                             top_->ptr<uint32_t>(),
                             io["tokens"].ptr<int32_t>(),
                             io["parents"].ptr<int32_t>()};
    int rows_per_sm = 0, trees_per_sm = 0;
    ATTNBENCH_CUDA_CHECK(eagle2::configure(&rows_per_sm, &trees_per_sm));
    const int64_t sms = be.props().multiProcessorCount;
    row_ctas_ = std::clamp<int64_t>(int64_t{s.batch} * s.slots, 1, sms * std::max(rows_per_sm, 1) * eagle2::kWaves);
    tree_ctas_ = std::clamp<int64_t>(s.batch, 1, sms * std::max(trees_per_sm, 1) * eagle2::kWaves);
    mask_ = prepare_stage(decoding::eagle2_mask_case(c), backend, io);
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(eagle2::launch(params_, row_ctas_, tree_ctas_, stream_));
    mask_->run();
  }

 private:
  cudaStream_t stream_ = nullptr;
  BufferPtr top_;
  eagle2::Params params_{};
  int64_t row_ctas_ = 1, tree_ctas_ = 1;
  std::unique_ptr<Impl> mask_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaEagle2Tree, "eagle2_tree", "cuda", "radix");
