// tree_mask on CUDA (variant "ancestors"): tree_mask_cuda.cu, a CTA per tree with the tree's parents
// in shared memory; each node's thread walks its ancestor chain once for its mask row and depth, a
// block scan of the leaf flags places the leaves' retrieve rows, and each leaf's thread walks its
// path into its row. Nothing allocated. The plan, fixed in prepare(): a warp per 32 nodes up to 256
// threads, the shared memory of smem_bytes() (opted into past 48 KiB), and at most kWaves waves of
// the CTAs the occupancy API puts on the device.
#include <algorithm>
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "tree_mask_launch.h"

namespace attnbench::cuda {
namespace {

// Why a tree of this case does not fit a CTA's shared memory, or "".
std::string smem_refusal(const decoding::TreeParams& s, uint64_t limit) {
  const size_t need = tree_mask::smem_bytes(s);
  if (need <= limit) return {};
  return cat("a tree of ", s.nodes, " nodes needs ", need, " bytes of shared memory per block (parents, depths, child counts, "
             "leaf words); the device allows ", limit);
}

class CudaTreeMask final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const std::string why = smem_refusal(decoding::tree_params(c), limits.shared_mem_bytes);
    return why.empty() ? Support::yes() : Support::no(why);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const cudaDeviceProp& props = be.props();
    params_ = tree_mask::Params{decoding::tree_params(c),         io["parents"].ptr<int32_t>(),
                                io["mask"].ptr<uint32_t>(),       io["depth"].ptr<int32_t>(),
                                io["position_ids"].ptr<int32_t>(), io["n_leaves"].ptr<int32_t>(),
                                io["retrieve"].ptr<int32_t>()};
    const std::string why = smem_refusal(params_.s, props.sharedMemPerBlockOptin);
    if (!why.empty()) throw BackendError("tree_mask: " + why);
    threads_ = tree_mask::threads_for(params_.s.nodes);
    smem_ = tree_mask::smem_bytes(params_.s);
    int per_sm = 0;
    ATTNBENCH_CUDA_CHECK(tree_mask::configure(threads_, smem_, &per_sm));
    const int64_t resident = static_cast<int64_t>(props.multiProcessorCount) * std::max(per_sm, 1);
    ctas_ = std::clamp<int64_t>(params_.s.batch, 1, resident * tree_mask::kWaves);
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(tree_mask::launch(params_, ctas_, threads_, smem_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  tree_mask::Params params_{};
  int threads_ = tree_mask::kMaxThreads;
  size_t smem_ = 0;
  int64_t ctas_ = 1;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaTreeMask, "tree_mask", "cuda", "ancestors");
