// mha, mqa, gqa, swa, cog and the decode primitives gather_decode, bias_decode and tree_decode on
// the CPU: one impl serving all eight (variant "blocked"), the attention stage (attention_stage.h) on the case's buffers.
#include "attention_stage.h"
#include "attnbench/impl.h"

namespace attnbench::cpu {
namespace {

class CpuAttention final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    const attention::AttentionParams s = attention::attention_params(c);
    stage_.prepare(s, c.dtype, attn::case_io(s, io), as_cpu(backend));
  }

  std::string compute_ceiling() const override { return stage_.compute_ceiling(); }
  void run() override { stage_.run(); }

 private:
  attn::AttentionStage stage_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuAttention, "mha", "cpu", "blocked");
ATTNBENCH_IMPL(attnbench::cpu::CpuAttention, "mqa", "cpu", "blocked");
ATTNBENCH_IMPL(attnbench::cpu::CpuAttention, "gqa", "cpu", "blocked");
ATTNBENCH_IMPL(attnbench::cpu::CpuAttention, "swa", "cpu", "blocked");
ATTNBENCH_IMPL(attnbench::cpu::CpuAttention, "cog", "cpu", "blocked");
ATTNBENCH_IMPL(attnbench::cpu::CpuAttention, "gather_decode", "cpu", "blocked");
ATTNBENCH_IMPL(attnbench::cpu::CpuAttention, "bias_decode", "cpu", "blocked");
ATTNBENCH_IMPL(attnbench::cpu::CpuAttention, "tree_decode", "cpu", "blocked");
