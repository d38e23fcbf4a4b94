// sampling on CUDA (variant "radix_select"): the decoding family's sampler stage with no processor
// of its own (sampler_impl.h).
#include "sampler_impl.h"

ATTNBENCH_IMPL(attnbench::cuda::SamplerImpl, "sampling", "cuda", "radix_select");
