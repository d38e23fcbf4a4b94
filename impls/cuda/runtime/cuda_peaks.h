// In-run ceilings of the CUDA device (measure_peaks()): a 16-byte copy kernel over two arrays of up
// to 1 GiB (bytes read + written, best of 10) and an mma.sync bf16 loop on every SM (the attention
// kernels' tensor-core path, best of 5); the fp32 FFMA rate is reported in `how` for comparison.
#pragma once

#include <cuda_runtime_api.h>

#include "attnbench/backend.h"

namespace attnbench::cuda {

Peaks measure_cuda_peaks(cudaStream_t stream, int sms);

}  // namespace attnbench::cuda
