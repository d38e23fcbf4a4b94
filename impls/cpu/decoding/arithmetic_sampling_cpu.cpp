// arithmetic_sampling on the CPU (variant "bucket_select"): the decoding family's sampler stage
// (sampler_stage.h) up to each row's kept set, then the code's inverse CDF over the kept masses in
// token-id order (SamplerParams::arith_codes), a sequence's steps in order.
#include "sampler_stage.h"

ATTNBENCH_IMPL(attnbench::cpu::SamplerImpl, "arithmetic_sampling", "cpu", "bucket_select");
