// tree_verify on CUDA (variant "paths", as the CPU's): tree_verify_cuda.cu. The node kernel reduces
// every (tree, node) distribution once — a CTA per row, coalesced float4 reads, the argmax and
// (typical) the fp64-summed entropy, kept as the node's argmax and threshold τ in a workspace
// allocated here; the path kernel then scores each tree's leaf paths, a thread per path, and a
// block reduction picks the best and writes the outputs. The probabilities are read once (the
// bytes the method is bound by); the path kernel reads only p(x) of the drafts it reaches.
// The plan, fixed in prepare(): node CTAs of 32..512 threads (about 32 probabilities a thread),
// path CTAs of a warp per 32 nodes up to 256, each grid at most kWaves waves of the CTAs the
// occupancy API puts on the device, striding over its rows or trees. Nothing allocated in run().
#include <algorithm>
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "tree_verify_launch.h"

namespace attnbench::cuda {
namespace {

class CudaTreeVerify final : public Impl {
 public:
  // Every schema-valid case (f32 only): V ≤ 2^20 keeps a row's indices in int32, batch·n ≤ 2^26 the grids'.
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const cudaDeviceProp& props = be.props();
    tree_verify::Params& p = params_;
    p = tree_verify::Params{};
    p.s = decoding::tree_verify_params(c);
    p.probs = io["target_probs"].ptr<float>();
    p.tokens = io["tokens"].ptr<int32_t>();
    p.retrieve = io["retrieve"].ptr<int32_t>();
    p.n_leaves = io["n_leaves"].ptr<int32_t>();
    p.tokens_out = io["tokens_out"].ptr<int32_t>();
    p.emitted = io["emitted"].ptr<int32_t>();
    p.accept_len = io["accept_len"].ptr<int32_t>();
    p.best_path = io["best_path"].ptr<int32_t>();
    p.accepted_nodes = io["accepted_nodes"].ptr<int32_t>();
    const int64_t rows = static_cast<int64_t>(p.s.batch) * p.s.nodes;
    stats_ = be.allocator().allocate(static_cast<size_t>(rows) * sizeof(tree_verify::NodeStat), "tree_verify.node_stats");
    p.stats = stats_->ptr<tree_verify::NodeStat>();

    node_threads_ = tree_verify::node_threads(p.s.vocab);
    path_threads_ = tree_verify::path_threads(p.s.nodes);
    int node_per_sm = 0, path_per_sm = 0;
    ATTNBENCH_CUDA_CHECK(tree_verify::configure(node_threads_, path_threads_, &node_per_sm, &path_per_sm));
    const int64_t sms = props.multiProcessorCount;
    node_ctas_ = std::clamp<int64_t>(rows, 1, sms * std::max(node_per_sm, 1) * tree_verify::kWaves);
    path_ctas_ = std::clamp<int64_t>(p.s.batch, 1, sms * std::max(path_per_sm, 1) * tree_verify::kWaves);
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(tree_verify::node_launch(params_, node_ctas_, node_threads_, stream_));
    ATTNBENCH_CUDA_CHECK(tree_verify::path_launch(params_, path_ctas_, path_threads_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  tree_verify::Params params_{};
  BufferPtr stats_;
  int node_threads_ = tree_verify::kNodeMaxThreads, path_threads_ = tree_verify::kPathMaxThreads;
  int64_t node_ctas_ = 1, path_ctas_ = 1;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaTreeVerify, "tree_verify", "cuda", "paths");
