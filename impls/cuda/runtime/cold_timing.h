// Cold timing on the CUDA backend: the L2 flush before a cold sample (flush_cache) and the stream
// hold that keeps launch latency out of a timed single launch (hold_stream / release_stream).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace attnbench::cuda {

// A memset of twice the L2 (nvbench's flush) over a buffer allocated on first use.
class L2Flush {
 public:
  explicit L2Flush(size_t l2_bytes) : bytes_(2 * l2_bytes) {}
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  // Allocates the buffer on first use; returns the device memory that took (0 once it exists),
  // which is the backend's own rather than any impl's.
  size_t prepare();
  // Enqueues the flush on `stream` (after prepare()).
  void enqueue(cudaStream_t stream);

 private:
  void* buffer_ = nullptr;
  size_t bytes_;
  uint8_t fill_ = 0;  // a different byte each flush, so no write can be elided
};

// A one-thread kernel spinning on a host-mapped generation counter (nvbench's blocking kernel)
// until release() or a 10 s timeout, which release() reports.
class StreamHold {
 public:
  StreamHold();  // allocates the mapped flags (throws BackendError)
  ~StreamHold();
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  // Enqueues the spinning kernel on `stream` unless it is already held.
  void hold(cudaStream_t stream);
  // Lets the kernel finish; throws BackendError if it had already given up (timed out).
  void release();
  // Lets the kernel finish without looking (for destructors).
  void let_go() noexcept;

 private:
  volatile uint32_t* flags_ = nullptr;  // [0] released generation, [1] generation that timed out
  uint32_t generation_ = 0;
  bool holding_ = false;
};

}  // namespace attnbench::cuda
