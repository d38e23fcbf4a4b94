#include "cuda_allocator.h"

#include "cuda_check.h"
#include "cuda_stream.h"

namespace attnbench::cuda {

namespace {

// cudaMalloc hands out memory in pages of up to 2 MiB; counting each tracked buffer at that
// granularity makes untracked_bytes a lower bound, so only real untracked allocations are flagged.
constexpr size_t kAllocGranule = size_t{2} << 20;

size_t granules(size_t bytes) { return (bytes + kAllocGranule - 1) / kAllocGranule * kAllocGranule; }

}  // namespace

size_t CudaAllocator::held_bytes() const {
  std::lock_guard lock(mu_);
  return held_;
}

Allocator::Raw CudaAllocator::raw_allocate(size_t total) {
  check_not_lost();
  void* p = nullptr;
  ATTNBENCH_CUDA_CHECK(cudaMalloc(&p, total));
  std::lock_guard lock(mu_);
  sizes_[p] = total;
  held_ += granules(total);
  return {p, nullptr};
}

void CudaAllocator::raw_free(const Raw& raw) noexcept {
  (void)cudaFree(raw.native);  // after a sticky error this fails; the memory goes with the context
  std::lock_guard lock(mu_);
  if (auto it = sizes_.find(raw.native); it != sizes_.end()) {
    held_ -= granules(it->second);
    sizes_.erase(it);
  }
}

void CudaAllocator::raw_write(const Raw& raw, size_t offset, const void* src, size_t n) {
  check_not_lost();
  copy_and_wait(static_cast<char*>(raw.native) + offset, src, n, cudaMemcpyHostToDevice, stream_);
}

void CudaAllocator::raw_read(const Raw& raw, size_t offset, void* dst, size_t n) {
  check_not_lost();
  copy_and_wait(dst, static_cast<const char*>(raw.native) + offset, n, cudaMemcpyDeviceToHost, stream_);
}

size_t used_device_bytes() {
  size_t free_bytes = 0, total = 0;
  ATTNBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return total - free_bytes;
}

}  // namespace attnbench::cuda
