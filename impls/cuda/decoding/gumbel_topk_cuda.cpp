// gumbel_topk on CUDA (variant "radix_select"): the decoding family's sampler stage (sampler_impl.h)
// up to the kept mask, then the k best keys of its race (SamplerParams::gumbel_k): a rank select of
// the race's keys, the k gathered and ordered in shared memory.
#include "sampler_impl.h"

ATTNBENCH_IMPL(attnbench::cuda::SamplerImpl, "gumbel_topk", "cuda", "radix_select");
