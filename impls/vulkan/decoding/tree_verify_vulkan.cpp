// tree_verify on Vulkan (variant "paths", as the CPU impl's): two dispatches, because choosing a
// tree's path needs every node's figures and those come from many workgroups.
//   1. shaders/tree_verify_nodes.comp: a workgroup per (tree, node) pair reads the node's
//      distribution once, lanes striding over the vocabulary, and reduces it to the argmax (lowest
//      index among equal maxima) and, for typical acceptance, τ = min(ε, δ·exp(−H)) with H's fp32
//      terms summed in fp64; 8 bytes per node go to a scratch buffer.
//   2. shaders/tree_verify_paths.comp: a workgroup per tree, lanes over its leaf paths, each
//      scored as the CPU impl's choose() does (accepted prefix, fp32 sum of ln p), a workgroup
//      reduction to the best (longest, highest score, lowest index), then lanes over the D + 1
//      columns write every output element.
// The plan: 256 lanes for the node reduction (bandwidth: enough loads in flight), lanes up to the
// tree's size for the paths. It refuses a device without shaderFloat64 (the entropy sum; the
// stage-1 shader carries the capability in either mode), a tensor over one binding, and a loop
// past lavapipe's limiter (none of the schema's cases comes near it).
#include <memory>

#include "../runtime/plan_support.h"
#include "../runtime/vulkan_backend.h"
#include "attnbench/impl.h"
#include "reference/decoding/tree_common.h"

namespace attnbench::vulkan {
namespace {

struct VerifyPlan {
  uint32_t node_threads = 0, path_threads = 0;
  uint64_t loop_iterations = 0;  // an upper bound per invocation of either stage, nothing unrolled
};

VerifyPlan verify_plan(const decoding::TreeVerifyParams& p, const DeviceView& d) {
  VerifyPlan v;
  v.node_threads = d.workgroup(256);
  v.path_threads = d.workgroup(std::min<uint32_t>(256, pow2_ceil(static_cast<uint32_t>(p.nodes))));
  const uint64_t L = static_cast<uint64_t>(p.max_depth) + 1;
  uint64_t steps = 1;
  while ((1ull << steps) < std::max(v.node_threads, v.path_threads)) ++steps;
  const uint64_t nodes_loop = ceil_div(static_cast<uint64_t>(p.vocab), v.node_threads) + steps;
  const uint64_t paths_loop = ceil_div(static_cast<uint64_t>(p.nodes), v.path_threads) * (L + 1) + steps +
                              ceil_div(L, v.path_threads);
  v.loop_iterations = std::max(nodes_loop, paths_loop);
  return v;
}

bool pow2(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

class VulkanTreeVerify final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    if (std::string why = missing_feature(limits, {"float64"}, "tree_verify's node reduction (the fp64 entropy sum)");
        !why.empty())
      return Support::no(why);
    const decoding::TreeVerifyParams p = decoding::tree_verify_params(c);
    const DeviceView d(limits);
    const uint64_t Bn = uint64_t{static_cast<uint32_t>(p.batch)} * static_cast<uint32_t>(p.nodes);
    const uint64_t L = static_cast<uint64_t>(p.max_depth) + 1;
    std::string why = over_binding({{"target_probs", Bn * static_cast<uint32_t>(p.vocab) * 4, 4},
                                    {"retrieve", Bn * L * 4, 4},
                                    {"the node figures", Bn * 8, 4}},
                                   d);
    if (!why.empty()) return Support::no(why);
    const VerifyPlan v = verify_plan(p, d);
    // The shaders' shared-memory trees halve the lane count.
    if (!pow2(v.node_threads) || !pow2(v.path_threads))
      return Support::no(cat("workgroups of ", v.node_threads, " and ", v.path_threads,
                             " lanes: tree_verify's reductions need powers of two"));
    const uint64_t shared = 16ull * v.node_threads;  // f32 + u32 + f64 a lane (stage 2 needs 12)
    if (shared > d.shared)
      return Support::no(cat("the node reduction needs ", shared, " bytes of shared memory, over this device's ", d.shared));
    if (d.loop_cap != 0 && v.loop_iterations > d.loop_cap - d.loop_cap / 8)
      return Support::no(cat("vocab=", p.vocab, ", nodes=", p.nodes, ", max_depth=", p.max_depth, " needs up to ",
                             v.loop_iterations, " loop iterations per invocation, past this device's loop limit of ",
                             d.loop_cap));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    p_ = decoding::tree_verify_params(c);
    const VerifyPlan v = verify_plan(p_, DeviceView(be_->probe().limits));
    stats_ = be_->allocator().allocate(static_cast<size_t>(p_.batch) * p_.nodes * 8, "tree_verify.stats");
    nodes_ = be_->bind(be_->pipeline("tree_verify_nodes", {v.node_threads}, 2), {&io["target_probs"], stats_.get()});
    paths_ = be_->bind(be_->pipeline("tree_verify_paths", {v.path_threads}, 10),
                       {&io["target_probs"], &io["tokens"], &io["retrieve"], &io["n_leaves"], stats_.get(),
                        &io["tokens_out"], &io["emitted"], &io["accept_len"], &io["best_path"], &io["accepted_nodes"]});
  }

  void run() override {
    be_->dispatch(*nodes_, p_, static_cast<uint64_t>(p_.batch) * static_cast<uint64_t>(p_.nodes));
    be_->dispatch(*paths_, p_, static_cast<uint64_t>(p_.batch));  // ordered after stage 1 by the stream's barrier
  }

 private:
  VulkanBackend* be_ = nullptr;
  decoding::TreeVerifyParams p_{};
  BufferPtr stats_;
  std::unique_ptr<BoundPipeline> nodes_, paths_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanTreeVerify, "tree_verify", "vulkan", "paths");
