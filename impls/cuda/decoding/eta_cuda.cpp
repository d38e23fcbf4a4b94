// eta on CUDA (variant "radix_select"): the decoding family's sampler stage (sampler_impl.h) with
// its probability floor at min(epsilon, √epsilon·exp(−H)) (SamplerParams::cutoff_entropy): one
// more sweep of the row sums the kept set's mass and entropy terms.
#include "sampler_impl.h"

ATTNBENCH_IMPL(attnbench::cuda::SamplerImpl, "eta", "cuda", "radix_select");
