// What every backend's per-step eviction impl shares (contract: eviction_step.h). A backend's step
// impl derives from EvictionStepImpl and brings its scores and eviction kernels; the step's
// attention is the backend's own gqa decode over the slots (StepAttention), run through the
// registry, so no decode kernel is copied and the step gets whichever variant the backend's
// decode uses for that shape. Header-only: it is impl support (it allocates and runs kernels),
// which reference/ builds that link no backend (the fuzzers) must not compile.
#pragma once

#include <memory>
#include <string>

#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "eviction_step.h"
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

namespace step_detail {

// The first variant of the backend's gqa that takes the step's attention, or null and why not.
inline std::unique_ptr<Impl> first_supporting(const Case& attn, const std::string& backend, const DeviceLimits& limits,
                                       std::string* why) {
  std::string reasons;
  for (const ImplEntry* e : registry().impls(attn.method_name(), backend)) {
    std::unique_ptr<Impl> impl = e->make();
    const Support s = impl->supports(attn, limits);
    if (s.ok) return impl;
    reasons += (reasons.empty() ? "" : "; ") + e->variant + ": " + s.reason;
  }
  if (why) *why = reasons.empty() ? cat("no ", attn.method_name(), " impl on ", backend) : reasons;
  return nullptr;
}

}  // namespace step_detail

inline std::string StepAttention::unsupported(const Case& c, const std::string& backend, const DeviceLimits& limits) {
  std::string why;
  const Case attn = step_attention_case(c);
  return step_detail::first_supporting(attn, backend, limits, &why) ? std::string() : cat("the step's attention (", attn.id(), "): ", why);
}

inline void StepAttention::prepare(const Case& c, Backend& backend, const IoBuffers& io) {
  const Case attn = step_attention_case(c);
  std::string why;
  impl_ = step_detail::first_supporting(attn, backend.name(), backend.probe().limits, &why);
  ATTNBENCH_ASSERT(impl_, "prepare() of a case supports() refused: ", why);
  const StepParams s = step_params(c);
  HostTensor len("kv_len", DType::i32, {s.batch});
  len.fill(s.slots);
  kv_len_ = backend.allocator().allocate(len.bytes(), "step.kv_len");
  lse_ = backend.allocator().allocate(int64_t{s.batch} * s.q_heads * sizeof(float), "step.lse");
  IoBuffers sub;
  sub.add("q", &io["q"]);
  sub.add("k", &io["k"]);
  sub.add("v", &io["v"]);
  sub.add("kv_len", kv_len_.get());
  sub.add("O", &io["out"]);
  sub.add("LSE", lse_.get());
  impl_->prepare(attn, backend, sub);
  backend.upload(len, *kv_len_);
}

inline Support EvictionStepImpl::supports(const Case& c, const DeviceLimits& limits) const {
  if (c.phase != "decode") return Support::no("the step variant runs phase decode; phase prefill is the scorer's");
  std::string why = StepAttention::unsupported(c, backend_, limits);
  if (why.empty()) why = unsupported(c, limits);
  return why.empty() ? Support::yes() : Support::no(why);
}

}  // namespace attnbench::kvcomp
