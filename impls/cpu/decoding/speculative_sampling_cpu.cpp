// speculative_sampling on the CPU (variant "race"): the chain verification stage
// (chain_verify_stage.h), every row verifying all its drafts.
#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "chain_verify_stage.h"
#include "reference/decoding/speculative_sampling_common.h"

namespace attnbench::cpu {
namespace {

class CpuSpeculativeSampling final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    if (c.i64("vocab") >= (int64_t{1} << 24)) return Support::no("race indices are tracked in fp32 lanes: vocab < 2^24");
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    stage_.prepare(decoding::speculative_params(c), c.seed, backend, io);
  }

  void run() override { stage_.run(nullptr); }

 private:
  ChainVerifyStage stage_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuSpeculativeSampling, "speculative_sampling", "cpu", "race");
