#include "eviction_step_impl.h"

#include "attnbench/error.h"
#include "attnbench/registry.h"
#include "eviction_step.h"

namespace attnbench::kvcomp {

namespace {

// The first variant of the backend's gqa that takes the step's attention, or null and why not.
std::unique_ptr<Impl> first_supporting(const Case& attn, const std::string& backend, const DeviceLimits& limits,
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

}  // namespace

std::string StepAttention::unsupported(const Case& c, const std::string& backend, const DeviceLimits& limits) {
  std::string why;
  const Case attn = step_attention_case(c);
  return first_supporting(attn, backend, limits, &why) ? std::string() : cat("the step's attention (", attn.id(), "): ", why);
}

void StepAttention::prepare(const Case& c, Backend& backend, const IoBuffers& io) {
  const Case attn = step_attention_case(c);
  std::string why;
  impl_ = first_supporting(attn, backend.name(), backend.probe().limits, &why);
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

Support EvictionStepImpl::supports(const Case& c, const DeviceLimits& limits) const {
  if (c.phase != "decode") return Support::no("the step variant runs phase decode; phase prefill is the scorer's");
  std::string why = StepAttention::unsupported(c, backend_, limits);
  if (why.empty()) why = unsupported(c, limits);
  return why.empty() ? Support::yes() : Support::no(why);
}

}  // namespace attnbench::kvcomp
