// arithmetic_sampling on CUDA (variant "radix_select"): the decoding family's sampler stage
// (sampler_impl.h) up to each row's kept mask, then the code's inverse CDF over the kept masses in
// token-id order by the stage's mass search (SamplerParams::arith_codes), a CTA per sequence
// taking its steps in order.
#include "sampler_impl.h"

ATTNBENCH_IMPL(attnbench::cuda::SamplerImpl, "arithmetic_sampling", "cuda", "radix_select");
