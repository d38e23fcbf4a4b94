// Work on the backend's one stream (non-blocking, created by the backend): blocking copies
// between host and device, and the CUDA-event timer around enqueued launches.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "attnbench/backend.h"

namespace attnbench::cuda {

// cudaMemcpyAsync on `stream`, then waits for the stream, so the copy is ordered after every
// launch enqueued before it.
void copy_and_wait(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t stream);

// DeviceTimer: events recorded on the stream around the timed launches.
class EventTimer final : public DeviceTimer {
 public:
  explicit EventTimer(cudaStream_t stream);
  ~EventTimer() override;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start() override;
  void stop() override;
  double seconds() override;

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace attnbench::cuda
