// sampling on the CPU (variant "bucket_select"): the decoding family's sampler stage
// (sampler_stage.h: thresholds from bucket counts and masses, no sort of the row), rows in
// parallel on the backend's pool, runtime dispatch to AVX-512.
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::cpu::SamplerImpl, "sampling", "cpu", "bucket_select");
