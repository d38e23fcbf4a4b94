// eagle2_tree on Vulkan (variant "radix"): three dispatches.
//   1. shaders/eagle2_rows.comp: a workgroup per row of draft logits (batch · slots of them) finds
//      its top k and their log-softmax values in two passes over the row (the lanes' maxima for a
//      floor; the exps' fp64 sum while gathering the few logits above the floor), with a radix
//      selection over the row when planted ties crowd the floor: the read the method is bound by,
//      8k bytes a row out.
//   2. shaders/eagle2_select.comp: a workgroup per tree ranks each level's k² candidates for the
//      frontier (merged sorted lists, binary searches), selects the best total_tokens by the same
//      radix selection over all C, and writes tokens and parents in creation order.
//   3. tree_mask's Vulkan stage over those parents (mask, depths, position ids, paths).
// The plan: 256 lanes (a power of two: the fp64 tree and the scans halve it). It refuses a device
// without shaderFloat64, a tensor over one binding, a workgroup's shared memory over the device's,
// and loops past lavapipe's limiter (the schema's largest vocabulary takes about 8 passes of
// 4096 iterations at 256 lanes).
#include <memory>

#include "../runtime/plan_support.h"
#include "../runtime/vulkan_backend.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "reference/decoding/eagle2_common.h"

namespace attnbench::vulkan {
namespace {

struct Eagle2Plan {
  uint32_t threads = 0;
  uint64_t shared_rows = 0, shared_select = 0;
  uint64_t loop_iterations = 0;  // an upper bound per invocation of either stage, nothing unrolled
};

Eagle2Plan eagle2_plan(const decoding::Eagle2Params& p, const DeviceView& d) {
  Eagle2Plan e;
  e.threads = d.workgroup(256);
  const uint64_t T = e.threads, radix = 4 * 2048 + 4 * T + 12;
  e.shared_rows = radix + 8 + 8 * 256 + 8 * 32 + 12 * T;  // the gathered (256), the top k, per lane
  e.shared_select = radix + 2 * 4 * 16 * 32 + 4 * 32 * 32 + 2 * 4 * 481;
  uint64_t steps = 1;
  while ((1ull << steps) < T) ++steps;
  // A radix round: clearing, counting, the run, the scan, the walk; five rounds at most.
  const auto select = [&](uint64_t count) { return 5 * (2048 / T + ceil_div(count, T) + 2048 / T + steps + 2048 / T); };
  const uint64_t V = static_cast<uint64_t>(p.vocab), C = static_cast<uint64_t>(p.candidates), k = p.top_k;
  const uint64_t rows = 3 * ceil_div(V, T) + T + select(V) + (256 / 32) * 256 + k + steps;
  const uint64_t frontiers = static_cast<uint64_t>(p.depth) * 2 * ceil_div(k * k, T) * (k * 6);
  const uint64_t sel = frontiers + select(C) + 3 * ceil_div(C, T) + 2 * ceil_div(481, T) + steps;
  e.loop_iterations = std::max(rows, sel);
  return e;
}

bool eagle2_pow2(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

class VulkanEagle2Tree final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    if (std::string why = missing_feature(limits, {"float64"}, "eagle2_tree's row reduction (the fp64 sum of the exps)");
        !why.empty())
      return Support::no(why);
    const decoding::Eagle2Params p = decoding::eagle2_params(c);
    if (p.top_k > 32 || p.depth > 16)
      return Support::no("the shaders' shared arrays hold top_k up to 32 and depth up to 16 (the schema's bounds)");
    const DeviceView d(limits);
    const uint64_t rows = uint64_t{static_cast<uint32_t>(p.batch)} * static_cast<uint32_t>(p.slots);
    std::string why = over_binding({{"draft_logits", rows * static_cast<uint32_t>(p.vocab) * 4, 4},
                                    {"the rows' top k", rows * static_cast<uint32_t>(p.top_k) * 8, 4}},
                                   d);
    if (!why.empty()) return Support::no(why);
    const Eagle2Plan e = eagle2_plan(p, d);
    if (!eagle2_pow2(e.threads) || e.threads > 1024 || e.threads < 32)
      return Support::no(cat("a workgroup of ", e.threads,
                             " lanes: eagle2_tree's reductions need a power of two from 32 (the largest top_k) to 1024"));
    const uint64_t shared = std::max(e.shared_rows, e.shared_select);
    if (shared > d.shared)
      return Support::no(cat("eagle2_tree's workgroups need ", shared, " bytes of shared memory, over this device's ", d.shared));
    if (d.loop_cap != 0 && e.loop_iterations > d.loop_cap - d.loop_cap / 8)
      return Support::no(cat("vocab=", p.vocab, ", top_k=", p.top_k, ", depth=", p.depth, " needs up to ", e.loop_iterations,
                             " loop iterations per invocation, past this device's loop limit of ", d.loop_cap));
    return stage_supports(decoding::eagle2_mask_case(c), "vulkan", limits);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    p_ = decoding::eagle2_params(c);
    const Eagle2Plan e = eagle2_plan(p_, DeviceView(be_->probe().limits));
    top_ = be_->allocator().allocate(static_cast<size_t>(p_.batch) * p_.slots * p_.top_k * 8, "eagle2_tree.top");
    rows_ = be_->bind(be_->pipeline("eagle2_rows", {e.threads}, 2), {&io["draft_logits"], top_.get()});
    select_ = be_->bind(be_->pipeline("eagle2_select", {e.threads}, 4),
                        {top_.get(), &io["root_token"], &io["tokens"], &io["parents"]});
    mask_ = prepare_stage(decoding::eagle2_mask_case(c), backend, io);
  }

  void run() override {
    be_->dispatch(*rows_, p_, static_cast<uint64_t>(p_.batch) * static_cast<uint64_t>(p_.slots));
    be_->dispatch(*select_, p_, static_cast<uint64_t>(p_.batch));  // ordered after stage 1 by the stream's barrier
    mask_->run();
  }

 private:
  VulkanBackend* be_ = nullptr;
  decoding::Eagle2Params p_{};
  BufferPtr top_;
  std::unique_ptr<BoundPipeline> rows_, select_;
  std::unique_ptr<Impl> mask_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanEagle2Tree, "eagle2_tree", "vulkan", "radix");
