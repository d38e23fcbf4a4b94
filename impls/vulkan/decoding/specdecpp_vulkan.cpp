// specdecpp on Vulkan (variant "race"), entirely on the device in one command stream:
//   specdecpp_linear / specdecpp_oracle  the acceptance head, one workgroup per (row, step): two
//                                        fp32 dot products of the hidden size, or the oracle's
//                                        Σ min(p, q) in fp64 (so the oracle needs shaderFloat64)
//   specdecpp_stop                       the stopping rule per row (fp32 prefix product) → draft_len
//   the chain verification stage         (chain_verify_stage.h) with draft_len as its row lengths
// Each dispatch reads what the one before wrote, ordered by the stream's barriers.
#include <string>

#include "../runtime/plan_support.h"
#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "chain_verify_stage.h"
#include "reference/decoding/specdecpp_common.h"

namespace attnbench::vulkan {
namespace {

struct HeadPlan {
  std::string unsupported;
  uint32_t head_threads = 0, stop_threads = 0;
};

// The oracle's workgroups are wider: each reads 2V floats, far more than the linear head's D, and
// a short batch gives few of them. Loops per invocation stay far below lavapipe's cap at the
// schema's limits: D / 128 ≤ 512 steps (linear), V / 1024 ≤ 1024 (oracle), K ≤ 64 (stop).
HeadPlan head_plan(const decoding::SpecDecParams& s, const DeviceLimits& limits) {
  const DeviceView d(limits);
  HeadPlan p;
  if (s.oracle) p.unsupported = missing_feature(limits, {"float64"}, "specdecpp's oracle head (the fp64 sum of min(p, q))");
  if (!p.unsupported.empty()) return p;
  const uint64_t B = static_cast<uint32_t>(s.batch), K = static_cast<uint32_t>(s.max_drafts);
  if (!s.oracle) p.unsupported = over_binding({{"hidden", B * K * static_cast<uint32_t>(s.hidden) * 4, 4}}, d);
  if (!p.unsupported.empty()) return p;
  p.head_threads = d.workgroup(s.oracle ? 256 : 128);
  p.stop_threads = d.workgroup(64);
  // The head's shared-memory tree halves the lane count.
  if ((p.head_threads & (p.head_threads - 1)) != 0)
    p.unsupported = cat("a workgroup of ", p.head_threads, " lanes: specdecpp's head reduction needs a power of two");
  return p;
}

class VulkanSpecDecPP final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    std::string why = head_plan(decoding::specdecpp_params(c), limits).unsupported;
    if (why.empty()) why = ChainVerifyStage::unsupported(decoding::specdecpp_chain_params(c), limits);
    return why.empty() ? Support::yes() : Support::no(why);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    s_ = decoding::specdecpp_params(c);
    const HeadPlan p = head_plan(s_, be_->probe().limits);
    ATTNBENCH_ASSERT(p.unsupported.empty(), "prepare() of a case supports() refused: ", p.unsupported);
    if (s_.oracle)
      head_ = be_->bind(be_->pipeline("specdecpp_oracle", {p.head_threads}, 3),
                        {&io["target_probs"], &io["draft_probs"], &io["accept_prob"]});
    else
      head_ = be_->bind(be_->pipeline("specdecpp_linear", {p.head_threads}, 4),
                        {&io["hidden"], &io["acc_weight"], &io["acc_bias"], &io["accept_prob"]});
    stop_ = be_->bind(be_->pipeline("specdecpp_stop", {p.stop_threads}, 2), {&io["accept_prob"], &io["draft_len"]});
    stop_groups_ = ceil_div(static_cast<uint32_t>(s_.batch), p.stop_threads);
    stage_.prepare(decoding::specdecpp_chain_params(c), *be_, io, &io["draft_len"]);
  }

  void run() override {
    be_->dispatch(*head_, s_, static_cast<uint64_t>(s_.batch) * static_cast<uint64_t>(s_.max_drafts));
    be_->dispatch(*stop_, s_, stop_groups_);
    stage_.record();
  }

 private:
  VulkanBackend* be_ = nullptr;
  decoding::SpecDecParams s_{};
  std::unique_ptr<BoundPipeline> head_, stop_;
  uint64_t stop_groups_ = 0;
  ChainVerifyStage stage_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanSpecDecPP, "specdecpp", "vulkan", "race");
