// frspec on Vulkan (variant "subset_head"): the draft head over the subset's rows, q and the
// drafts on the device (shaders/frspec.comp: head, softmax and draft passes), then
// speculative_sampling's Vulkan stage for the verification.
#include <algorithm>

#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "reference/decoding/frspec_common.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan {
namespace {

struct FrspecPush {
  decoding::FrspecParams s;
  uint32_t groups;
};

class VulkanFrspec final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const DeviceView d(limits);
    const decoding::FrspecParams s = decoding::frspec_params(c);
    const uint64_t H = uint64_t{static_cast<uint32_t>(s.prob_rows)} * s.draft_len, V = s.vocab, D = s.hidden;
    std::string why = missing_feature(limits, {"subgroup_basic", "subgroup_arithmetic", "subgroup_shuffle"}, "frspec's passes");
    if (why.empty())
      why = over_binding({{"lm_head", V * D * dtype_size(c.dtype), 16},
                          {"the full-vocabulary draft_probs", H * V * 4, 4},
                          {"draft_logits", H * static_cast<uint64_t>(s.subset) * 4, 4}},
                         d);
    if (!why.empty()) return Support::no(why);
    return stage_supports(decoding::frspec_verification_case(c), "vulkan", limits);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    const DeviceView d(be_->probe().limits);
    const decoding::FrspecParams s = decoding::frspec_params(c);
    const int64_t H = int64_t{s.prob_rows} * s.draft_len;
    const uint32_t threads = d.workgroup(64);
    const uint32_t dtype = c.dtype == DType::f32 ? 0u : c.dtype == DType::f16 ? 1u : 2u;
    const uint32_t vec = s.hidden % 8 == 0 ? 1u : 0u;
    q_full_ = be_->allocator().allocate(static_cast<size_t>(H) * s.vocab * sizeof(float), "frspec.draft_probs_full");
    be_->upload(HostTensor("zeros", DType::f32, {H * s.vocab}), *q_full_);  // zero outside the subset, for good
    top_ = be_->allocator().allocate(static_cast<size_t>(H) * sizeof(uint32_t), "frspec.top");
    const std::vector<const Buffer*> buffers = {&io["lm_head"],     &io["hidden"],    &io["subset_ids"], &io["draft_logits"],
                                                &io["draft_probs"], q_full_.get(),    top_.get(),        &io["draft_token_ids"]};
    for (uint32_t mode = 0; mode < 3; ++mode)
      passes_[mode] = be_->bind(be_->pipeline("frspec", {threads, mode, dtype, vec, threads}, 8), buffers);
    groups_ = {static_cast<uint64_t>(s.subset), static_cast<uint64_t>(H), static_cast<uint64_t>(s.rows) * s.draft_len};
    s_ = s;

    // The verification reads the target and the drafts, and q on the whole vocabulary.
    verify_ = prepare_stage(decoding::frspec_verification_case(c), backend, io, {{"draft_probs", q_full_.get()}});
  }

  void run() override {
    for (int mode = 0; mode < 3; ++mode) be_->dispatch(*passes_[mode], FrspecPush{s_, static_cast<uint32_t>(groups_[mode])}, groups_[mode]);
    verify_->run();
  }

 private:
  VulkanBackend* be_ = nullptr;
  decoding::FrspecParams s_{};
  BufferPtr q_full_, top_;
  std::unique_ptr<BoundPipeline> passes_[3];
  std::array<uint64_t, 3> groups_{};
  std::unique_ptr<Impl> verify_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanFrspec, "frspec", "vulkan", "subset_head");
