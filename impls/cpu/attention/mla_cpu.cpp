// mla on the CPU (variant "staged"): the form's stages from mla_stages() (mla_common.h), each the
// backend's shared one — the projection stage (projection_stage.h) and the attention stage
// (attention_stage.h) — on workspaces from the backend's allocator.
#include "../runtime/isa.h"
#include "attention_stage.h"
#include "attnbench/impl.h"
#include "projection_stage.h"
#include "reference/attention/mla_common.h"

namespace attnbench::cpu {
namespace {

class CpuMla final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    const mla::MlaStages st = mla::mla_stages(mla::mla_params(c));
    const DType t = c.dtype;
    const size_t es = dtype_size(t);
    const auto* kv_len = io["kv_len"].ptr<int32_t>();
    absorbed_ = st.qa_elements > 0;
    if (!absorbed_) {
      k_ = cpu.allocator().allocate(st.k_elements * es, "mla.k");
      v_ = cpu.allocator().allocate(st.v_elements * es, "mla.v");
      first_.prepare(st.decompress_k, t, io["kv_latent"].ptr(), io["w_uk"].ptr(), k_->ptr(), kv_len, cpu);
      second_.prepare(st.decompress_v, t, io["kv_latent"].ptr(), io["w_uv"].ptr(), v_->ptr(), kv_len, cpu);
      attn::StageIo sio{io["q"].ptr(), k_->ptr(), v_->ptr(), kv_len, io["O"].ptr(), io["LSE"].ptr<float>(), nullptr};
      attn::add_rope_io(sio, st.attention, io);  // PreRoPE: the stage rotates q and the decompressed keys
      attention_.prepare(st.attention, t, sio, cpu);
    } else {
      qa_ = cpu.allocator().allocate(st.qa_elements * es, "mla.q_absorbed");
      u_ = cpu.allocator().allocate(st.u_elements * es, "mla.u");
      first_.prepare(st.absorb_q, t, io["q"].ptr(), io["w_uk"].ptr(), qa_->ptr(), kv_len, cpu);
      attention_.prepare(st.attention, t,
                         {qa_->ptr(), io["kv_latent"].ptr(), io["kv_latent"].ptr(), kv_len, u_->ptr(), io["LSE"].ptr<float>(), nullptr},
                         cpu);
      second_.prepare(st.project_out, t, u_->ptr(), io["w_uv"].ptr(), io["O"].ptr(), kv_len, cpu);
    }
  }

  // The tiles' rate where a projection multiplies on them (bf16 with cpu.amx on), else the
  // attention stage's.
  std::string compute_ceiling() const override {
    return first_.amx() || second_.amx() ? kAmxBf16Ceiling : attention_.compute_ceiling();
  }

  void run() override {
    first_.run();
    if (absorbed_) {
      attention_.run();
      second_.run();
    } else {
      second_.run();
      attention_.run();
    }
  }

 private:
  bool absorbed_ = false;
  project::ProjectionStage first_, second_;  // naive: decompress K, V; absorbed: absorb q, project out
  attn::AttentionStage attention_;
  BufferPtr k_, v_, qa_, u_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuMla, "mla", "cpu", "staged");
