// tree_mask on Vulkan (variant "ancestors"): shaders/tree_mask.comp, one workgroup per tree, one
// dispatch. Each node's lane walks its ancestor chain once (parents in shared memory) and writes
// its mask row word by word, highest first, with its depth; a workgroup scan over the leaf
// bitset's words ranks the leaves; each leaf's lane walks its path again into its retrieve row.
// O(W + depth) per node and O(D) per leaf, and no lane reads another lane's global writes.
//
// The plan: a lane per node up to the device's workgroup limit (the walks are the serial part, and
// one tree is one workgroup, so more lanes is less latency for the small batches a verifier
// builds), shared arrays sized to the tree (power of two, to keep pipeline variants few). It
// refuses a tree whose parents do not fit shared memory, a tensor over one binding, and on
// lavapipe a tree whose loops would pass gallivm's loop limiter (none of the schema's: 4096 nodes
// of depth 4095 take about 50k iterations per invocation at 1024 lanes).
#include <memory>

#include "../runtime/plan_support.h"
#include "../runtime/vulkan_backend.h"
#include "attnbench/impl.h"
#include "reference/decoding/tree_common.h"

namespace attnbench::vulkan {
namespace {

struct TreePlan {
  uint32_t threads = 0;
  uint32_t ncap = 0;  // nodes the shader's shared arrays hold
  uint64_t shared_bytes = 0;
  uint64_t loop_iterations = 0;  // an upper bound per invocation, nothing unrolled
};

TreePlan tree_plan(const decoding::TreeParams& p, const DeviceView& d) {
  TreePlan t;
  const uint32_t n = static_cast<uint32_t>(p.nodes), W = static_cast<uint32_t>(p.mask_words);
  const uint64_t L = static_cast<uint64_t>(p.max_depth) + 1;
  t.threads = d.workgroup(std::min<uint32_t>(pow2_ceil(n), 1024));
  t.ncap = std::max<uint32_t>(32, pow2_ceil(n));
  t.shared_bytes = 4ull * t.ncap + 2 * 4ull * (t.ncap / 32) + 4ull * t.threads;
  // Per invocation, as the shader's loops run: K node slots each walking W + depth + 1 steps (at
  // most W + D + 1 in a SIMD group) and writing a leaf row of L; the scan's chunks of log2 steps;
  // the rows past the leaves spread over the lanes; plus the loading loops.
  const uint64_t K = ceil_div(n, t.threads), chunks = ceil_div(W, t.threads);
  uint32_t steps = 1;
  while ((1u << steps) < std::min(t.threads, W)) ++steps;
  t.loop_iterations = K + chunks + K * (W + static_cast<uint64_t>(p.max_depth) + 2) + chunks * (steps + 1) +
                      K * (L + 1) + (uint64_t{n} * L + t.threads - 1) / t.threads;
  return t;
}

class VulkanTreeMask final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const decoding::TreeParams p = decoding::tree_params(c);
    const DeviceView d(limits);
    const uint64_t Bn = uint64_t{static_cast<uint32_t>(p.batch)} * static_cast<uint32_t>(p.nodes);
    std::string why = over_binding({{"parents", Bn * 4, 4},
                                    {"mask", Bn * static_cast<uint32_t>(p.mask_words) * 4, 4},
                                    {"depth", Bn * 4, 4},
                                    {"retrieve", Bn * (static_cast<uint64_t>(p.max_depth) + 1) * 4, 4}},
                                   d);
    if (!why.empty()) return Support::no(why);
    const TreePlan t = tree_plan(p, d);
    if (t.shared_bytes > d.shared)
      return Support::no(cat("a tree of ", p.nodes, " nodes keeps ", t.shared_bytes,
                             " bytes of parents and leaf bits in shared memory, over this device's ", d.shared));
    // An eighth of the limiter's budget kept as slack, as keys_within_loop_cap does.
    if (d.loop_cap != 0 && t.loop_iterations > d.loop_cap - d.loop_cap / 8)
      return Support::no(cat("nodes=", p.nodes, ", max_depth=", p.max_depth, " needs up to ", t.loop_iterations,
                             " loop iterations per invocation at ", t.threads, " lanes, past this device's loop limit of ",
                             d.loop_cap));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    p_ = decoding::tree_params(c);
    const TreePlan t = tree_plan(p_, DeviceView(be_->probe().limits));
    pipeline_ = be_->bind(be_->pipeline("tree_mask", {t.threads, t.ncap}, 6),
                          {&io["parents"], &io["mask"], &io["depth"], &io["position_ids"], &io["n_leaves"], &io["retrieve"]});
  }

  void run() override { be_->dispatch(*pipeline_, p_, static_cast<uint64_t>(p_.batch)); }

 private:
  VulkanBackend* be_ = nullptr;
  decoding::TreeParams p_{};
  std::unique_ptr<BoundPipeline> pipeline_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanTreeMask, "tree_mask", "vulkan", "ancestors");
