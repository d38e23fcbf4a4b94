// arithmetic_sampling on Vulkan (variant "radix_select"): the decoding family's sampler stage
// (sampler_stage.h) up to each row's kept mask, then the code's inverse CDF over the kept masses in
// token-id order by the stage's mass search (SamplerParams::arith_codes), a workgroup per sequence
// taking its steps in order; 64-bit codes as pairs of 32-bit words (no shaderInt64 needed).
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::vulkan::SamplerImpl, "arithmetic_sampling", "vulkan", "radix_select");
