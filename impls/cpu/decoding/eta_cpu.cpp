// eta on the CPU (variant "bucket_select"): the decoding family's sampler stage (sampler_stage.h)
// with its probability floor at min(epsilon, √epsilon·exp(−H)) (SamplerParams::cutoff_entropy).
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::cpu::SamplerImpl, "eta", "cpu", "bucket_select");
