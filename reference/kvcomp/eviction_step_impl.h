// What every backend's per-step eviction impl shares (contract: eviction_step.h). A backend's step
// impl derives from EvictionStepImpl and brings its scores and eviction kernels; the step's
// attention is the backend's own gqa decode over the slots (StepAttention), run through the
// registry, so no decode kernel is copied and the step gets whichever variant the backend's
// decode uses for that shape.
#pragma once

#include <memory>
#include <string>

#include "attnbench/impl.h"
#include "eviction_step_common.h"

namespace attnbench::kvcomp {

// The backend's gqa decode over the step's slots: writes io["out"] and lse() [batch·q_heads] f32
// (natural log), from io["q"], io["k"], io["v"].
class StepAttention {
 public:
  void prepare(const Case& c, Backend& backend, const IoBuffers& io);
  void run() { impl_->run(); }
  const Buffer& lse() const { return *lse_; }
  std::string compute_ceiling() const { return impl_->compute_ceiling(); }
  // Why no gqa impl of the backend takes the step's attention ("" if one does).
  static std::string unsupported(const Case& c, const std::string& backend, const DeviceLimits& limits);

 private:
  std::unique_ptr<Impl> impl_;
  BufferPtr kv_len_, lse_;
};

class EvictionStepImpl : public Impl {
 public:
  explicit EvictionStepImpl(std::string backend) : backend_(std::move(backend)) {}
  Support supports(const Case& c, const DeviceLimits& limits) const final;

 protected:
  // Why the backend's scores and eviction kernels cannot take the case ("" if they can).
  virtual std::string unsupported(const Case& /*c*/, const DeviceLimits& /*limits*/) const { return {}; }

 private:
  std::string backend_;
};

}  // namespace attnbench::kvcomp
