// What each row records about the CUDA device right after its checked run (telemetry()): NVML's
// clocks, throttle reasons, temperature and power where NVML answers, and device memory,
// used − (baseline + tracked buffers) = untracked_bytes, flagged as untracked_allocation above
// 16 MiB (an impl that cudaMalloc'ed past the allocator and still holds it).
#pragma once

#include <cstddef>

#include "attnbench/json.h"

namespace attnbench::cuda {

class CudaAllocator;
class Nvml;

// `nvml` may be null or not ok(); `baseline` is the context's and the backend's own device memory.
Json device_telemetry(const Nvml* nvml, size_t baseline, const CudaAllocator& allocator);

}  // namespace attnbench::cuda
