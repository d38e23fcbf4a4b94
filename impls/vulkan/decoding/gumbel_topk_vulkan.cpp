// gumbel_topk on Vulkan (variant "radix_select"): the decoding family's sampler stage
// (sampler_stage.h) up to the kept mask, then the k best keys of its race (SamplerParams::gumbel_k):
// a rank select of the race's keys, the k gathered and ordered in shared memory.
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::vulkan::SamplerImpl, "gumbel_topk", "vulkan", "radix_select");
