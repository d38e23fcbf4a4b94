// speculative_sampling on CUDA (variant "race"): verification and the exponential race on the
// device (speculative_sampling_cuda.cu), Philox draws bit-identical to the CPU's.
//
// The plan, fixed in prepare() from the case and the SM count (no result depends on it: the
// acceptance tests are per draft and the race's argmax does not depend on how the vocabulary is
// divided):
//   spans        vocabulary parts per row: enough (row, span) tasks to fill every warp slot of the
//                GPU, each span at least 256 tokens (one span when the rows alone fill it, as in
//                distribution mode)
//   span_tokens  a multiple of 4, so a span starts on a Philox block (and a float4) when V % 4 == 0
//   lanes        threads per task: 4..32, about 16 tokens (4 Philox blocks) per lane
// One kernel when spans == 1, else the race kernel and the finish kernel (a warp per row).
#include <algorithm>
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/rng.h"
#include "reference/decoding/speculative_sampling_common.h"
#include "speculative_sampling_launch.h"

namespace attnbench::cuda {
namespace {

constexpr int64_t kMinSpanTokens = 256;

struct Plan {
  int spans, span_tokens, lanes;
};

Plan plan(const decoding::SpeculativeParams& s, int64_t warp_slots) {
  const int64_t V = s.vocab;
  const int64_t max_spans = std::max<int64_t>(1, V / kMinSpanTokens);
  const int64_t wanted = std::clamp<int64_t>((warp_slots + s.rows - 1) / s.rows, 1, max_spans);
  const int64_t span_tokens = ((V + wanted - 1) / wanted + 3) / 4 * 4;
  Plan pl{static_cast<int>((V + span_tokens - 1) / span_tokens), static_cast<int>(span_tokens), 4};
  while (pl.lanes < 32 && pl.lanes * 16 < span_tokens) pl.lanes *= 2;
  return pl;
}

class CudaSpeculativeSampling final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    // Every schema-valid f32 case: rows ≤ 10^7 and V ≤ 2^20 keep the grid (rows·spans·lanes / 256
    // CTAs, spans·rows about max(rows, warp slots)) and every index far inside their types.
    if (c.dtype != DType::f32) return Support::no(cat(dtype_name(c.dtype), ": the probabilities are read as f32"));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const decoding::SpeculativeParams s = decoding::speculative_params(c);
    const cudaDeviceProp& props = be.props();
    const Plan pl = plan(s, static_cast<int64_t>(props.multiProcessorCount) * (props.maxThreadsPerMultiProcessor / 32));

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
    if (p.spans > 1) {
      partial_ = be.allocator().allocate(static_cast<size_t>(s.rows) * p.spans * sizeof(speculative::RaceBest),
                                         "speculative_sampling.race_partials");
      p.partial = partial_->ptr<speculative::RaceBest>();
    }
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(speculative::race_launch(params_, stream_));
    if (params_.spans > 1) ATTNBENCH_CUDA_CHECK(speculative::finish_launch(params_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  speculative::Params params_{};
  BufferPtr partial_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaSpeculativeSampling, "speculative_sampling", "cuda", "race");
