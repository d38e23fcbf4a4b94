// typical on the CPU (variant "bucket_select"): the decoding family's sampler stage
// (sampler_stage.h) with typical's search after the chain (SamplerParams::typical_fx).
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::cpu::SamplerImpl, "typical", "cpu", "bucket_select");
