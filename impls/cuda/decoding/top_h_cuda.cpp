// top_h on CUDA (variant "radix_select"): the decoding family's sampler stage (sampler_impl.h)
// with top-H's budget after the chain (SamplerParams::top_h_n): the kept set's ln Z, a rank select
// of the top N, then the mass search over the logits' keys weighted by each token's share of the
// entropy.
#include "sampler_impl.h"

ATTNBENCH_IMPL(attnbench::cuda::SamplerImpl, "top_h", "cuda", "radix_select");
