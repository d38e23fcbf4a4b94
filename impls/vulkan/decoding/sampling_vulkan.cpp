// sampling on Vulkan (variant "radix_select"): the decoding family's sampler stage
// (sampler_stage.h, shaders/sampler_stage.glsl): thresholds by radix selection on the logits'
// order keys with fixed-point masses, no sort, then the race over the kept tokens.
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::vulkan::SamplerImpl, "sampling", "vulkan", "radix_select");
