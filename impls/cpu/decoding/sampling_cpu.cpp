// sampling on the CPU (variant "bucket_select"): the decoding family's sampler stage
// (sampler_stage.h: thresholds from bucket counts and masses, no sort of the row), rows in
// parallel on the backend's pool, runtime dispatch to AVX-512.
#include "attnbench/impl.h"
#include "sampler_stage.h"

namespace attnbench::cpu {
namespace {

class CpuSampling final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    if (c.i64("vocab") >= (int64_t{1} << 24)) return Support::no("race indices are tracked in fp32 lanes: vocab < 2^24");
    return Support::yes();
  }
  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override { stage_.prepare(c, backend, io); }
  void run() override { stage_.run(); }

 private:
  SamplerStage stage_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuSampling, "sampling", "cpu", "bucket_select");
