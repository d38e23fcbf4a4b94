// Device helpers every kernel family uses.
#pragma once

// A device function kept out of line (its own registers). nvcc spells it __noinline__; the
// emulation's host compiler (tests/cuda_emulation), whose CUDA headers leave that name to nvcc, its
// attribute.
#ifdef __CUDACC__
#define ATTNBENCH_DEVICE_NOINLINE __device__ __noinline__
#else
#define ATTNBENCH_DEVICE_NOINLINE __device__ __attribute__((noinline))
#endif

namespace attnbench::cuda {

// −inf as a bit pattern (no dependence on math headers or fast-math flags).
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000u); }

}  // namespace attnbench::cuda
