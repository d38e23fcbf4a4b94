// The C entry points that tests reach with dlsym (philox_words.cu, kvcomp/kv_stages.cu,
// decoding/speculative_sampling_cuda.cu) return 0, or −1 with the CUDA error in err.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>

namespace attnbench::cuda {

inline int entry_result(cudaError_t e, char* err, size_t err_len) {
  if (e == cudaSuccess) return 0;
  std::snprintf(err, err_len, "%s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
  return -1;
}

}  // namespace attnbench::cuda
