// typical on CUDA (variant "radix_select"): the decoding family's sampler stage (sampler_impl.h) with
// typical's search after the chain (SamplerParams::typical_fx): the kept set's moments, then
// top-p's mass search over keys of the distance from the entropy.
#include "sampler_impl.h"

ATTNBENCH_IMPL(attnbench::cuda::SamplerImpl, "typical", "cuda", "radix_select");
