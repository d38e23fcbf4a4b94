// gumbel_topk on the CPU (variant "bucket_select"): the decoding family's sampler stage
// (sampler_stage.h) up to the kept set, then the k best keys of its race (SamplerParams::gumbel_k).
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::cpu::SamplerImpl, "gumbel_topk", "cpu", "bucket_select");
