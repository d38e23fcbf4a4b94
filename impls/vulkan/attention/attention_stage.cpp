#include "attention_stage.h"

#include <algorithm>

#include "attnbench/error.h"
#include "runtime/plan_support.h"
#include "runtime/vulkan_backend.h"

namespace attnbench::vulkan::attn {

Plan plan_variant(Variant v, const attention::AttentionParams& s, DType dtype, const DeviceLimits& limits,
                  const std::string& phase) {
  return v == Variant::coopmat_nv ? plan_coopmat_nv(s, dtype, limits, phase) : plan_portable(s, dtype, limits);
}

Stage::Stage() = default;
Stage::~Stage() = default;

void Stage::prepare(VulkanBackend& be, const Plan& plan, DType dtype, const Buffers& io) {
  ATTNBENCH_ASSERT(plan.unsupported.empty(), "prepare() of an attention the plan refused: ", plan.unsupported);
  be_ = &be;
  plan_ = plan;
  const attention::AttentionParams& s = plan_.push.s;
  const bool split = plan_.push.plan.splits > 1;
  part_ml_ = be.allocator().allocate(split ? partial_ml_bytes(s, plan_) : 16, "attention.partial_ml");
  part_o_ = be.allocator().allocate(split ? partial_o_bytes(s, plan_) : 16, "attention.partial_o");
  const Pipeline& main = be.pipeline(plan_.shader, plan_.constants, 9);
  // Without ALiBi the slopes binding is never read; q stands in for it.
  const Buffer* slopes = s.alibi ? io.alibi_slopes : io.q;
  ATTNBENCH_ASSERT(slopes, "attention with alibi needs the slopes buffer");
  main_ = be.bind(main, {io.q, io.k, io.v, io.kv_len, io.o, io.lse, part_ml_.get(), part_o_.get(), slopes});
  if (split) {
    const uint32_t nt = std::max(64u, be.caps().max_subgroup_size);
    const Pipeline& merge = be.pipeline(
        "attention_merge", {nt, dtype_code(dtype), static_cast<uint32_t>(s.v_head_dim), plan_.partial_stride}, 4);
    merge_ = be.bind(merge, {part_ml_.get(), part_o_.get(), io.o, io.lse});
    merge_push_[0] = static_cast<uint32_t>(s.batch * s.q_heads * s.q_len);
    merge_push_[1] = plan_.push.plan.splits;
  }
}

void Stage::run() {
  be_->dispatch(*main_, plan_.push, plan_.push.plan.groups);
  if (merge_) be_->dispatch(*merge_, merge_push_, merge_push_[0]);
}

}  // namespace attnbench::vulkan::attn
