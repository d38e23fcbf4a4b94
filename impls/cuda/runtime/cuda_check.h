// CUDA errors as attnbench errors (harness/include/attnbench/error.h). Every runtime call that can fail goes through
// ATTNBENCH_CUDA_CHECK, which throws a BackendError naming the call, file:line and the error:
//
//   cuda: cudaMemcpyAsync(...) failed at impls/cuda/runtime/cuda_backend.cpp:120:
//         cudaErrorInvalidValue (invalid argument)
//
// Sticky errors (an illegal address, a device-side trap or assert, a launch timeout...) leave the
// CUDA context unusable for the rest of the process. The first one marks the backend lost and is
// thrown as DeviceLostError; every later check_not_lost() rethrows it at once, so each remaining
// case becomes an `error` row naming the original fault instead of a cascade of odd failures.
//
// Light on purpose: the kernel translation units include it, and it pulls no JSON.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace attnbench::cuda {

// True for errors after which the context cannot be used (CUDA's "sticky" errors).
bool is_sticky(cudaError_t e);

// Throws BackendError (DeviceLostError when sticky) for a failed call. Clears a non-sticky error
// so the next call starts clean.
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line);

// Throws DeviceLostError if an earlier sticky error made the device unusable.
void check_not_lost();
// The first sticky error's message, or "" while the device is usable.
std::string lost_reason();

}  // namespace attnbench::cuda

#define ATTNBENCH_CUDA_CHECK(call)                                                            \
  do {                                                                                        \
    const cudaError_t attnbench_cuda_err_ = (call);                                           \
    if (attnbench_cuda_err_ != cudaSuccess)                                                   \
      ::attnbench::cuda::throw_cuda_error(attnbench_cuda_err_, #call, __FILE__, __LINE__);    \
  } while (0)
