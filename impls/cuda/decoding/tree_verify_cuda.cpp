// tree_verify on CUDA (variant "paths", as the CPU's): tree_verify_cuda.cu. The node kernel reduces
// every (tree, node) distribution once — a CTA per row, coalesced float4 reads, the argmax and
// (typical) the fp64-summed entropy, kept as the node's argmax and threshold τ in a workspace
// allocated here; the path kernel then scores each tree's leaf paths, a thread per path, and a
// block reduction picks the best and writes the outputs. The probabilities are read once (the
// bytes the method is bound by); the path kernel reads only p(x) of the drafts it reaches.
// The plan, fixed in prepare(): node CTAs of 32..512 threads (about 32 probabilities a thread),
// path CTAs of a warp per 32 nodes up to 256, each grid at most kWaves waves of the CTAs the
// occupancy API puts on the device, striding over its rows or trees. Nothing allocated in run().
// The stochastic modes run the walk kernel alone: a CTA per row (about 16 tokens a thread, 32 to
// 1024 threads), as many CTAs as are resident at once (one wave: they take the rows in turn), each
// with a scratch slot of 2·V doubles (the row's unnormalised residual w and, without replacement,
// its draft g, unused for i.i.d. drafts; r and g are formed from them and their sums where read)
// allocated here, at most 256 MiB of slots (fewer CTAs past that): a row's residual must outlive
// its node's rejections, and recomputing it would cost a pass over V per earlier rejection. The
// slots are per CTA, not per row, so no chunking of rows is needed: 20000 rows of 16 tokens take
// 4224 slots of 256 bytes on an H200 (132 SMs × 32 CTAs), 4 rows of 128256 tokens 4 slots of 2 MB.
#include <algorithm>
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/rng.h"
#include "tree_verify_launch.h"

namespace attnbench::cuda {
namespace {

constexpr int64_t kMaxScratchBytes = int64_t{256} << 20;  // the walk CTAs' slots together

class CudaTreeVerify final : public Impl {
 public:
  // Every schema-valid case (f32 only): V ≤ 2^20 keeps a row's indices in int32, batch·n ≤ 2^26 the grids';
  // the walk's grid is at most the resident CTAs, its slots at most 256 MiB (one slot: 16 MiB).
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
    if (decoding::tree_stochastic(p.s)) {
      prepare_walk(be, io);
      return;
    }
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
    if (decoding::tree_stochastic(params_.s)) {
      ATTNBENCH_CUDA_CHECK(tree_verify::walk_launch(params_, walk_ctas_, walk_threads_, stream_));
      return;
    }
    ATTNBENCH_CUDA_CHECK(tree_verify::node_launch(params_, node_ctas_, node_threads_, stream_));
    ATTNBENCH_CUDA_CHECK(tree_verify::path_launch(params_, path_ctas_, path_threads_, stream_));
  }

 private:
  void prepare_walk(CudaBackend& be, const IoBuffers& io) {
    tree_verify::Params& p = params_;
    p.draft_probs = io["draft_probs"].ptr<float>();
    p.parents = io["parents"].ptr<int32_t>();
    p.domain = kDomainDraws;
    walk_threads_ = tree_verify::walk_threads(p.s.vocab);
    int per_sm = 0;
    ATTNBENCH_CUDA_CHECK(tree_verify::configure_walk(walk_threads_, &per_sm));
    const int64_t slot = 2 * static_cast<int64_t>(p.s.vocab) * static_cast<int64_t>(sizeof(double));
    const int64_t resident = static_cast<int64_t>(be.props().multiProcessorCount) * std::max(per_sm, 1);
    walk_ctas_ = std::clamp<int64_t>(std::min<int64_t>(p.s.rows, resident), 1, std::max<int64_t>(1, kMaxScratchBytes / slot));
    scratch_ = be.allocator().allocate(static_cast<size_t>(walk_ctas_ * slot), "tree_verify.walk");
    p.scratch = scratch_->ptr<double>();
  }

  cudaStream_t stream_ = nullptr;
  tree_verify::Params params_{};
  BufferPtr stats_, scratch_;
  int node_threads_ = tree_verify::kNodeMaxThreads, path_threads_ = tree_verify::kPathMaxThreads;
  int walk_threads_ = tree_verify::kWalkMaxThreads;
  int64_t node_ctas_ = 1, path_ctas_ = 1, walk_ctas_ = 1;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaTreeVerify, "tree_verify", "cuda", "paths");
