// Device-generated Philox words and uniforms for the cross-check in tests/cuda/runtime/philox_cuda_test.cpp.
// Exported with C linkage so the test finds it with dlsym: the test binary is built whether or not
// the CUDA backend is, and must not need this symbol at link time.
#include <cuda_runtime_api.h>

#include "entry_result.h"
#include "launch.cuh"
#include "philox.cuh"

namespace attnbench::cuda {
namespace {

__global__ void philox_words_kernel(DevicePhilox s, uint64_t first, uint64_t count, uint32_t* words, float* uniforms) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  words[i] = s.word(first + i);
  uniforms[i] = s.uniform_f32(first + i);
}

}  // namespace
}  // namespace attnbench::cuda

// Writes words[i] = w_(first+i) and uniforms[i] = u_(first+i) of the stream (seed, stream_id,
// domain) into host arrays of `count` elements, computed on the current CUDA device. Returns 0,
// or -1 with a message in err.
extern "C" int attnbench_cuda_philox_words(uint64_t seed, uint32_t stream_id, uint32_t domain, uint64_t first,
                                           uint64_t count, uint32_t* words, float* uniforms, char* err,
                                           size_t err_len) {
  using namespace attnbench::cuda;
  uint32_t* d_words = nullptr;
  float* d_uniforms = nullptr;
  cudaError_t e = cudaMalloc(&d_words, count * sizeof(uint32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_uniforms, count * sizeof(float));
  if (e == cudaSuccess) {
    const unsigned blocks = static_cast<unsigned>((count + 255) / 256);
    e = launch_kernel(philox_words_kernel, dim3(blocks), dim3(256), 0, nullptr, DevicePhilox::make(seed, stream_id, domain), first,
                      count, d_words, d_uniforms);
  }
  if (e == cudaSuccess) e = cudaMemcpy(words, d_words, count * sizeof(uint32_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(uniforms, d_uniforms, count * sizeof(float), cudaMemcpyDeviceToHost);
  (void)cudaFree(d_words);
  (void)cudaFree(d_uniforms);
  return entry_result(e, err, err_len);
}
