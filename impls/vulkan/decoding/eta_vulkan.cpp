// eta on Vulkan (variant "radix_select"): the decoding family's sampler stage (sampler_stage.h)
// with its probability floor at min(epsilon, √epsilon·exp(−H)) (SamplerParams::cutoff_entropy):
// one more sweep of the thresholds pass sums the kept set's mass and entropy terms.
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::vulkan::SamplerImpl, "eta", "vulkan", "radix_select");
