#include "cold_timing.h"

#include <atomic>

#include "attnbench/error.h"
#include "cuda_allocator.h"
#include "cuda_check.h"
#include "device_kernels.h"

namespace attnbench::cuda {

namespace {
// A forgotten release_stream() must not hang the device for ever.
constexpr uint64_t kHoldTimeoutNs = 10'000'000'000ull;
}  // namespace

L2Flush::~L2Flush() {
  if (buffer_) (void)cudaFree(buffer_);
}

size_t L2Flush::prepare() {
  if (buffer_) return 0;
  // Twice the L2, so no line of the case survives whatever the L2's hashing and partitions do.
  const size_t before = used_device_bytes();
  ATTNBENCH_CUDA_CHECK(cudaMalloc(&buffer_, bytes_));
  return used_device_bytes() - before;
}

void L2Flush::enqueue(cudaStream_t stream) { ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(buffer_, ++fill_, bytes_, stream)); }

StreamHold::StreamHold() {
  void* flags = nullptr;
  ATTNBENCH_CUDA_CHECK(cudaHostAlloc(&flags, 64, cudaHostAllocMapped));
  flags_ = static_cast<volatile uint32_t*>(flags);
  flags_[0] = 0;
  flags_[1] = 0;
}

StreamHold::~StreamHold() {
  let_go();
  (void)cudaFreeHost(const_cast<uint32_t*>(flags_));
}

void StreamHold::hold(cudaStream_t stream) {
  if (holding_) return;
  uint32_t* device_flags = nullptr;
  ATTNBENCH_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), const_cast<uint32_t*>(flags_), 0));
  ++generation_;
  ATTNBENCH_CUDA_CHECK(launch_hold(device_flags, generation_, device_flags + 1, kHoldTimeoutNs, stream));
  holding_ = true;
}

void StreamHold::release() {
  if (!holding_) return;
  holding_ = false;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  flags_[0] = generation_;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (flags_[1] == generation_)
    throw BackendError(cat("cuda: the stream hold timed out after ", kHoldTimeoutNs / 1'000'000'000ull,
                           " s before release_stream(); the held launches were not timed behind it"));
}

void StreamHold::let_go() noexcept {
  if (holding_) flags_[0] = generation_;
}

}  // namespace attnbench::cuda
