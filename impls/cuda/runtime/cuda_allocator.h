// The tracked allocator of the CUDA backend: one cudaMalloc per buffer, guards written and read
// through the backend's stream. It counts what it holds at cudaMalloc's page granularity, so the
// backend's telemetry can tell the device memory of tracked buffers from any impl's own.
#pragma once

#include <cuda_runtime_api.h>

#include <mutex>
#include <unordered_map>

#include "attnbench/allocator.h"

namespace attnbench::cuda {

class CudaAllocator final : public Allocator {
 public:
  CudaAllocator(size_t device_bytes, cudaStream_t stream) : device_bytes_(device_bytes), stream_(stream) {}
  size_t max_allocation() const override { return device_bytes_; }
  // Device memory the live buffers take, each rounded up to whole 2 MiB pages.
  size_t held_bytes() const;

 protected:
  Raw raw_allocate(size_t total) override;
  void raw_free(const Raw& raw) noexcept override;
  void raw_write(const Raw& raw, size_t offset, const void* src, size_t n) override;
  void raw_read(const Raw& raw, size_t offset, void* dst, size_t n) override;

 private:
  size_t device_bytes_;
  cudaStream_t stream_;
  mutable std::mutex mu_;
  std::unordered_map<void*, size_t> sizes_;
  size_t held_ = 0;
};

// Device memory in use (cudaMemGetInfo: total − free), whoever holds it.
size_t used_device_bytes();

}  // namespace attnbench::cuda
