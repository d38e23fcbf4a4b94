// mla on Vulkan (variant "portable"): the stages of reference/attention/mla_common.h's
// mla_stages(), in order, on the shared projection and attention stages; no math of its own.
//   naive     decompress_k, decompress_v (projection.comp) into K and V workspaces, then attention
//   absorbed  absorb_q into a q̃ workspace, attention over the latent cache read as both K and V
//             (one buffer, V its rows' first kv_lora_rank elements) into a u workspace, project_out
// The attention runs on the portable kernels: the cooperative-matrix kernel takes V rows only as
// wide as K's, which neither form has.
#include <algorithm>

#include "attention_stage.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "projection_stage.h"
#include "reference/attention/mla_common.h"
#include "runtime/vulkan_backend.h"

namespace attnbench::vulkan {
namespace {

struct MlaPlans {
  std::string unsupported;  // the first stage's reason, named
  mla::MlaStages stages;
  proj::Plan first, second;  // naive: decompress_k, decompress_v; absorbed: absorb_q, project_out
  attn::Plan attention;
};

MlaPlans plan_mla(const Case& c, const DeviceLimits& limits) {
  MlaPlans p;
  const mla::MlaParams m = mla::mla_params(c);
  p.stages = mla::mla_stages(m);
  const mla::MlaStages& st = p.stages;
  p.first = proj::plan_projection(m.absorbed ? st.absorb_q : st.decompress_k, c.dtype, limits);
  p.second = proj::plan_projection(m.absorbed ? st.project_out : st.decompress_v, c.dtype, limits);
  p.attention = attn::plan_variant(attn::Variant::portable, st.attention, c.dtype, limits, c.phase);
  if (!p.first.unsupported.empty())
    p.unsupported = cat(m.absorbed ? "absorb_q: " : "decompress_k: ", p.first.unsupported);
  else if (!p.second.unsupported.empty())
    p.unsupported = cat(m.absorbed ? "project_out: " : "decompress_v: ", p.second.unsupported);
  else if (!p.attention.unsupported.empty())
    p.unsupported = cat("attention: ", p.attention.unsupported);
  return p;
}

class VulkanMla final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const MlaPlans p = plan_mla(c, limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    VulkanBackend& be = as_vulkan(backend);
    const MlaPlans p = plan_mla(c, be.probe().limits);
    ATTNBENCH_ASSERT(p.unsupported.empty(), "prepare() of a case supports() refused: ", p.unsupported);
    absorbed_ = mla::mla_params(c).absorbed;
    const uint64_t es = dtype_size(c.dtype);
    const auto workspace = [&](int64_t elements, const char* name) {
      return be.allocator().allocate(std::max<uint64_t>(16, static_cast<uint64_t>(elements) * es), name);
    };
    const Buffer &q = io["q"], &latent = io["kv_latent"], &kv_len = io["kv_len"];
    if (absorbed_) {
      a_ = workspace(p.stages.qa_elements, "mla.q_absorbed");
      b_ = workspace(p.stages.u_elements, "mla.u");
      first_.prepare(be, p.first, q, io["w_uk"], kv_len, *a_);
      attention_.prepare(be, p.attention, c.dtype, {a_.get(), &latent, &latent, &kv_len, b_.get(), &io["LSE"]});
      second_.prepare(be, p.second, *b_, io["w_uv"], kv_len, io["O"]);
    } else {
      a_ = workspace(p.stages.k_elements, "mla.k");
      b_ = workspace(p.stages.v_elements, "mla.v");
      first_.prepare(be, p.first, latent, io["w_uk"], kv_len, *a_);
      second_.prepare(be, p.second, latent, io["w_uv"], kv_len, *b_);
      attn::Buffers buffers{&q, a_.get(), b_.get(), &kv_len, &io["O"], &io["LSE"]};
      attn::add_rope_buffers(buffers, p.stages.attention, io);  // PreRoPE: the stage rotates q and the decompressed keys
      attention_.prepare(be, p.attention, c.dtype, buffers);
    }
  }

  void run() override {
    if (absorbed_) {
      first_.run();
      attention_.run();
      second_.run();
    } else {
      first_.run();
      second_.run();
      attention_.run();
    }
  }

 private:
  bool absorbed_ = false;
  BufferPtr a_, b_;  // naive: K, V; absorbed: q̃, u
  proj::Stage first_, second_;
  attn::Stage attention_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanMla, "mla", "vulkan", "portable");
