// kivi on Vulkan (variant "portable"): KIVI's quantizer in one dispatch of shaders/kivi_quant.comp,
// one invocation per item: a channel's key group, a token's value group, or a row of the
// full-precision windows (the shader's header has the details). Every output is written whole,
// padding included, so the outputs are the reference's tensors bit for bit.
#include <string>
#include <vector>

#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "kivi_quant_plan.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan::kivi {
namespace {

constexpr uint32_t kQuantBindings = 15;  // kivi_quant.comp's buffers

struct QuantPlan {
  std::string unsupported;          // non-empty: why this device cannot run the case
  std::vector<uint32_t> constants;  // kivi_quant.comp's specialization constants
  KiviQuantPush push{};
  uint64_t groups = 0;              // workgroups
};

QuantPlan plan_kivi_quant(const Case& c, const DeviceLimits& limits) {
  QuantPlan p;
  const kvcomp::KiviParams s = kvcomp::kivi_params(c);
  p.push.s = s;
  if (c.dtype != DType::f16 && c.dtype != DType::bf16) {
    p.unsupported = cat("dtype ", dtype_name(c.dtype), ": KIVI's scales and windows are f16 or bf16");
    return p;
  }
  p.unsupported = missing_feature(limits, {"storage16"}, "kivi's quantizer");
  if (!p.unsupported.empty()) return p;
  const DeviceView d(limits);
  const uint64_t B = static_cast<uint32_t>(s.batch), H = static_cast<uint32_t>(s.kv_heads), D = static_cast<uint32_t>(s.head_dim);
  const uint64_t R = static_cast<uint32_t>(s.residual), T = static_cast<uint32_t>(s.kv_cap), es = dtype_size(c.dtype);
  const uint64_t vq = static_cast<uint32_t>(s.v_quant_cap), kg = static_cast<uint64_t>(kvcomp::kivi_k_groups(s));
  const uint64_t key_items = B * H * kg * D, value_items = B * H * vq * static_cast<uint64_t>(kvcomp::kivi_v_groups(s));
  const uint64_t items = key_items + value_items + B * H * (2 * R + 1);
  if (items >= (uint64_t{1} << 32)) {
    p.unsupported = cat("the quantizer's ", items, " items exceed the shader's 32-bit item index");
    return p;
  }
  p.unsupported = over_binding({{"k", B * H * T * D * es, es},
                                {"v", B * H * T * D * es, es},
                                {"k_codes", B * H * D * static_cast<uint64_t>(kvcomp::kivi_k_words(s)) * 4, 4},
                                {"k_scale", B * H * D * kg * es, es},
                                {"k_full", B * H * R * D * es, es},
                                {"v_codes", B * H * vq * static_cast<uint64_t>(kvcomp::kivi_v_words(s)) * 4, 4},
                                {"v_scale", B * H * vq * static_cast<uint64_t>(kvcomp::kivi_v_groups(s)) * es, es},
                                {"v_full", B * H * (R + 1) * D * es, es}},
                               d);
  if (!p.unsupported.empty()) return p;
  const uint32_t nt = d.workgroup(64);
  p.push.plan = {static_cast<uint32_t>(key_items), static_cast<uint32_t>(value_items), static_cast<uint32_t>(items)};
  p.constants = {nt, dtype_code(c.dtype), static_cast<uint32_t>(s.bits)};
  p.groups = (items + nt - 1) / nt;
  return p;
}

class VulkanKivi final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const QuantPlan p = plan_kivi_quant(c, limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    plan_ = plan_kivi_quant(c, be_->probe().limits);
    ATTNBENCH_ASSERT(plan_.unsupported.empty(), "prepare() of a kivi case the plan refused: ", plan_.unsupported);
    quant_ = be_->bind(be_->pipeline("kivi_quant", plan_.constants, kQuantBindings),
                       {&io["k"], &io["v"], &io["kv_len"], &io["k_codes"], &io["k_scale"], &io["k_min"], &io["k_full"],
                        &io["v_codes"], &io["v_scale"], &io["v_min"], &io["v_full"], &io["k_quant_groups"], &io["k_full_len"],
                        &io["v_quant_len"], &io["v_full_len"]});
  }

  void run() override {
    if (plan_.groups > 0) be_->dispatch(*quant_, plan_.push, plan_.groups);
  }

 private:
  VulkanBackend* be_ = nullptr;
  QuantPlan plan_;
  std::unique_ptr<BoundPipeline> quant_;
};

}  // namespace
}  // namespace attnbench::vulkan::kivi

ATTNBENCH_IMPL(attnbench::vulkan::kivi::VulkanKivi, "kivi", "vulkan", "portable");
