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
__device__ __forceinline__ float pos_inf() { return __int_as_float(0x7f800000u); }

// A full warp's max and sum, every lane getting the same bits (each step combines the same two
// values in either order).
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

}  // namespace attnbench::cuda
