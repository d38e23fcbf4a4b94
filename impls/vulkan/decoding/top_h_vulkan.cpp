// top_h on Vulkan (variant "radix_select"): the decoding family's sampler stage (sampler_stage.h)
// with top-H's budget after the chain (SamplerParams::top_h_n): the kept set's ln Z, a rank select
// of the top N, then the mass search over the logits' keys weighted by each token's share of the
// entropy.
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::vulkan::SamplerImpl, "top_h", "vulkan", "radix_select");
