// The tracked allocator of the Vulkan backend: one VkBuffer with its own VkDeviceMemory per
// allocation (the harness allocates a handful per case). Guards and bookkeeping are the base
// class's; Buffer::native() is the VkBuffer and Buffer::offset() (1 KiB, the guard) is where a
// shader binding starts, a multiple of every device's minStorageBufferOffsetAlignment.
//
// Memory: on a discrete GPU, device-local memory that the host cannot map (so tensors live in
// VRAM proper), reached through the stream's staging buffer; on integrated and CPU devices
// (lavapipe) host-visible coherent memory, mapped and written directly.
#pragma once

#include "attnbench/allocator.h"
#include "device.h"
#include "stream.h"

namespace attnbench::vulkan {

class VulkanAllocator final : public Allocator {
 public:
  VulkanAllocator(Device& device, Stream& stream);
  size_t max_allocation() const override;

  // Bytes of the buffer's user region, through a mapping or the staging buffer (blocking).
  void write(const Buffer& b, size_t offset, const void* src, size_t n) { raw_write(raw_of(b), Allocator::kGuardBytes + offset, src, n); }
  void read(const Buffer& b, size_t offset, void* dst, size_t n) { raw_read(raw_of(b), Allocator::kGuardBytes + offset, dst, n); }

 protected:
  Raw raw_allocate(size_t total_bytes) override;
  void raw_free(const Raw& raw) noexcept override;
  void raw_write(const Raw& raw, size_t offset, const void* src, size_t n) override;
  void raw_read(const Raw& raw, size_t offset, void* dst, size_t n) override;

 private:
  struct Allocation {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
  };
  static Raw raw_of(const Buffer& b) { return Raw{b.native(), b.extra}; }
  Device& dev_;
  Stream& stream_;
  VkPhysicalDeviceMemoryProperties mem_{};
};

inline VkBuffer vk_buffer(const Buffer& b) { return reinterpret_cast<VkBuffer>(b.native()); }

}  // namespace attnbench::vulkan
