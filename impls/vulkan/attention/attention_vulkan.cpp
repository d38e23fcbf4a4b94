// mha, mqa, gqa, swa, cog, gather_decode, bias_decode and tree_decode on Vulkan: one impl class per variant
// serving every method, as the CPU backend's does.
//   portable    every device: the split-KV kernel (decode) or the tiled kernel (prefill), in
//               f32, f16 and bf16 (attention_plan.h chooses)
//   coopmat_nv  devices offering VK_NV_cooperative_matrix: f16 prefill on the tensor cores (not
//               gather_decode, bias_decode nor tree_decode: decode-only methods)
// The work is the attention stage (attention_stage.h), which mla shares.
#include "../runtime/vulkan_backend.h"
#include "attention_stage.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"

namespace attnbench::vulkan {
namespace {

template <attn::Variant V>
class VulkanAttention final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const attn::Plan p = plan(c, limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    VulkanBackend& be = as_vulkan(backend);
    const attention::AttentionParams s = attention::attention_params(c);
    stage_.prepare(be, plan(c, be.probe().limits), c.dtype, attn::case_buffers(s, io));
  }

  void run() override { stage_.run(); }

 private:
  static attn::Plan plan(const Case& c, const DeviceLimits& limits) {
    return attn::plan_variant(V, attention::attention_params(c), c.dtype, limits, c.phase);
  }
  attn::Stage stage_;
};

using PortableAttention = VulkanAttention<attn::Variant::portable>;
using CoopmatNvAttention = VulkanAttention<attn::Variant::coopmat_nv>;

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "mha", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "mqa", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "gqa", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "swa", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "cog", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "gather_decode", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "bias_decode", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::PortableAttention, "tree_decode", "vulkan", "portable");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "mha", "vulkan", "coopmat_nv");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "mqa", "vulkan", "coopmat_nv");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "gqa", "vulkan", "coopmat_nv");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "swa", "vulkan", "coopmat_nv");
ATTNBENCH_IMPL(attnbench::vulkan::CoopmatNvAttention, "cog", "vulkan", "coopmat_nv");
