// The chain verification stage on CUDA (chain_verify_stage.h).
#include "chain_verify_stage.h"

#include <algorithm>

#include "../runtime/cuda_check.h"
#include "attnbench/rng.h"

namespace attnbench::cuda {

namespace {

constexpr int64_t kMinSpanTokens = 256;

struct VerifyPlan {
  int spans, span_tokens, lanes;
};

VerifyPlan verify_plan(const decoding::SpeculativeParams& s, int64_t warp_slots) {
  const int64_t V = s.vocab;
  const int64_t max_spans = std::max<int64_t>(1, V / kMinSpanTokens);
  const int64_t wanted = std::clamp<int64_t>((warp_slots + s.rows - 1) / s.rows, 1, max_spans);
  const int64_t span_tokens = ((V + wanted - 1) / wanted + 3) / 4 * 4;
  VerifyPlan pl{static_cast<int>((V + span_tokens - 1) / span_tokens), static_cast<int>(span_tokens), 4};
  while (pl.lanes < 32 && pl.lanes * 16 < span_tokens) pl.lanes *= 2;
  return pl;
}

}  // namespace

void ChainVerifyStage::prepare(const decoding::SpeculativeParams& s, CudaBackend& be, const IoBuffers& io) {
  const cudaDeviceProp& props = be.props();
  const VerifyPlan pl =
      verify_plan(s, static_cast<int64_t>(props.multiProcessorCount) * (props.maxThreadsPerMultiProcessor / 32));
  speculative::Params& p = params_;
  p = speculative::Params{};
  p.s = s;
  p.target = io["target_probs"].ptr<float>();
  p.draft = io["draft_probs"].ptr<float>();
  p.ids = io["draft_token_ids"].ptr<int32_t>();
  p.tokens = io["tokens"].ptr<int32_t>();
  p.emitted = io["emitted"].ptr<int32_t>();
  p.accepted = io["accepted_token_num"].ptr<int32_t>();
  p.emitted_draft = io["emitted_draft_token_num"].ptr<int32_t>();
  p.spans = pl.spans;
  p.span_tokens = pl.span_tokens;
  p.lanes = pl.lanes;
  p.domain = kDomainDraws;
  partial_.reset();
  if (p.spans > 1) {
    partial_ = be.allocator().allocate(static_cast<size_t>(s.rows) * p.spans * sizeof(speculative::RaceBest),
                                       "chain_verify.race_partials");
    p.partial = partial_->ptr<speculative::RaceBest>();
  }
}

void ChainVerifyStage::run(const int32_t* lengths, cudaStream_t stream) {
  params_.lengths = lengths;
  ATTNBENCH_CUDA_CHECK(speculative::verify_launch(params_, stream));
}

}  // namespace attnbench::cuda
