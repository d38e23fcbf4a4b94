// typical on Vulkan (variant "radix_select"): the decoding family's sampler stage (sampler_stage.h) with
// typical's search after the chain (SamplerParams::typical_fx): the kept set's moments, then
// top-p's mass search over keys of the distance from the entropy.
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::vulkan::SamplerImpl, "typical", "vulkan", "radix_select");
