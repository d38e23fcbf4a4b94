// epsilon on Vulkan (variant "radix_select"): the decoding family's sampler stage
// (sampler_stage.h) with its probability floor at epsilon (SamplerParams::cutoff): one more sweep
// of the thresholds pass sums the kept set's mass.
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::vulkan::SamplerImpl, "epsilon", "vulkan", "radix_select");
