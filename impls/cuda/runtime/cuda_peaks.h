// In-run ceilings of the CUDA device (measure_peaks()), over arrays of up to 1 GiB (far beyond the L2):
//  - read: a 16-byte load kernel, bytes read, best of 10 (what decode, scoring and sampling are
//    judged against);
//  - copy: a 16-byte copy kernel between two arrays, bytes read + written, best of 10;
//  - fp32: FFMA chains on every SM (the CUDA-core kernels, e.g. attention's `general`), best of 5;
//  - mma_bf16, mma_f16: mma.sync m16n8k16 loops with f32 accumulation on every SM (the tensor-core
//    path: attention's `mma` names the one of its dtype), best of 5.
#pragma once

#include <cuda_runtime_api.h>

#include "attnbench/backend.h"

namespace attnbench::cuda {

// The tensor-core ceilings, by input type: what Impl::compute_ceiling names for kernels on that path.
inline constexpr const char* kMmaBf16Ceiling = "mma_bf16_flops_per_s";
inline constexpr const char* kMmaF16Ceiling = "mma_f16_flops_per_s";

Peaks measure_cuda_peaks(cudaStream_t stream, int sms);

}  // namespace attnbench::cuda
