#include "cuda_stream.h"

#include "cuda_check.h"

namespace attnbench::cuda {

void copy_and_wait(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t stream) {
  ATTNBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, kind, stream));
  ATTNBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

EventTimer::EventTimer(cudaStream_t stream) : stream_(stream) {
  ATTNBENCH_CUDA_CHECK(cudaEventCreate(&start_));
  ATTNBENCH_CUDA_CHECK(cudaEventCreate(&stop_));
}

EventTimer::~EventTimer() {
  (void)cudaEventDestroy(start_);
  (void)cudaEventDestroy(stop_);
}

void EventTimer::start() {
  check_not_lost();
  ATTNBENCH_CUDA_CHECK(cudaEventRecord(start_, stream_));
}

void EventTimer::stop() {
  check_not_lost();
  ATTNBENCH_CUDA_CHECK(cudaEventRecord(stop_, stream_));
}

double EventTimer::seconds() {
  check_not_lost();
  ATTNBENCH_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  ATTNBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return 1e-3 * ms;
}

}  // namespace attnbench::cuda
