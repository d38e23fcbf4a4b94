// epsilon on CUDA (variant "radix_select"): the decoding family's sampler stage (sampler_impl.h)
// with its probability floor at epsilon (SamplerParams::cutoff): one more sweep of the row sums
// the kept set's mass.
#include "sampler_impl.h"

ATTNBENCH_IMPL(attnbench::cuda::SamplerImpl, "epsilon", "cuda", "radix_select");
