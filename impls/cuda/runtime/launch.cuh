// Kernel launches and their settings, in one place: every kernel of the backend is enqueued through
// launch_kernel(), so the host emulation of the device (tests/cuda_emulation, built with
// ATTNBENCH_CUDA_EMULATION by g++) runs the very launch code, grids included, on a CPU.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#ifdef ATTNBENCH_CUDA_EMULATION
#include "cuda_emulation/device.h"
#endif

namespace attnbench::cuda {

// kernel<<<grid, block, smem, stream>>>(args...), and the launch's error.
template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                          const Args&... args) {
#ifdef ATTNBENCH_CUDA_EMULATION
  (void)stream;
  return emulation::launch(kernel, grid, block, smem, args...);
#else
  kernel<<<grid, block, smem, stream>>>(args...);
  return cudaGetLastError();
#endif
}

// Sets a kernel's dynamic shared-memory limit and reports how many of its CTAs of `threads` fit on
// an SM.
template <typename... Params>
cudaError_t configure_kernel(void (*kernel)(Params...), int threads, size_t smem, int* ctas_per_sm) {
#ifdef ATTNBENCH_CUDA_EMULATION
  (void)kernel;
  return emulation::configure(threads, smem, ctas_per_sm);
#else
  const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (e != cudaSuccess) return e;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas_per_sm, kernel, threads, smem);
#endif
}

}  // namespace attnbench::cuda

// A kernel's dynamic shared memory as an array of `type` (the emulation hands each block its own).
#ifndef ATTNBENCH_DYNAMIC_SMEM
#define ATTNBENCH_DYNAMIC_SMEM(type, name) extern __shared__ __align__(128) type name[]
#endif
