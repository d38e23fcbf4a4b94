// epsilon on the CPU (variant "bucket_select"): the decoding family's sampler stage
// (sampler_stage.h) with its probability floor at epsilon (SamplerParams::cutoff).
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::cpu::SamplerImpl, "epsilon", "cpu", "bucket_select");
