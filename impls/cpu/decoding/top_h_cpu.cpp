// top_h on the CPU (variant "bucket_select"): the decoding family's sampler stage
// (sampler_stage.h) with top-H's entropy budget after the chain (SamplerParams::top_h_n).
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::cpu::SamplerImpl, "top_h", "cpu", "bucket_select");
