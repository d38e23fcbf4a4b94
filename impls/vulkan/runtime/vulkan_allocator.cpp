#include "vulkan_allocator.h"

#include <cstring>

#include "vk_check.h"

namespace attnbench::vulkan {

namespace {
std::string mib(uint64_t bytes) { return cat(static_cast<double>(bytes) / (1 << 20), " MiB"); }
}  // namespace

VulkanAllocator::VulkanAllocator(Device& device, Stream& stream) : dev_(device), stream_(stream) {
  dev_.vk().vkGetPhysicalDeviceMemoryProperties(dev_.physical(), &mem_);
}

size_t VulkanAllocator::max_allocation() const {
  // The guards are part of the allocation.
  const uint64_t limit = dev_.caps().max_allocation;
  return limit > 2 * kGuardBytes ? limit - 2 * kGuardBytes : 0;
}

Allocator::Raw VulkanAllocator::raw_allocate(size_t total) {
  const VkApi& vk = dev_.vk();
  VkDevice d = dev_.device();
  auto a = std::make_unique<Allocation>();
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = total;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ATTNBENCH_VK_CHECK(vk.vkCreateBuffer(d, &info, nullptr, &a->buffer));
  try {
    VkMemoryRequirements req{};
    vk.vkGetBufferMemoryRequirements(d, a->buffer, &req);
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = dev_.caps().discrete()
                        ? choose_memory_type(mem_, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
                        : choose_memory_type(mem_, req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host);
    if (type == ~0u) type = choose_memory_type(mem_, req.memoryTypeBits, 0, 0);
    if (type == ~0u) throw BackendError("vulkan: no memory type can hold a storage buffer");
    const uint32_t heap = mem_.memoryTypes[type].heapIndex;
    const uint64_t headroom = dev_.heap_headroom(heap);
    if (req.size > headroom)
      throw BackendError(cat("vulkan: out of device memory: ", mib(req.size), " requested on heap ", heap, " with ",
                             mib(headroom), " left in its VK_EXT_memory_budget budget (VK_ERROR_OUT_OF_DEVICE_MEMORY avoided)"));
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    ATTNBENCH_VK_CHECK(vk.vkAllocateMemory(d, &alloc, nullptr, &a->memory));
    ATTNBENCH_VK_CHECK(vk.vkBindBufferMemory(d, a->buffer, a->memory, 0));
    if ((mem_.memoryTypes[type].propertyFlags & host) == host)
      ATTNBENCH_VK_CHECK(vk.vkMapMemory(d, a->memory, 0, VK_WHOLE_SIZE, 0, &a->mapped));
  } catch (...) {
    if (a->memory) vk.vkFreeMemory(d, a->memory, nullptr);
    vk.vkDestroyBuffer(d, a->buffer, nullptr);
    throw;
  }
  Raw raw{reinterpret_cast<void*>(a->buffer), a.get()};
  a.release();
  return raw;
}

void VulkanAllocator::raw_free(const Raw& raw) noexcept {
  auto* a = static_cast<Allocation*>(raw.extra);
  // Work still recorded or in flight may use the buffer.
  stream_.finish_noexcept();
  const VkApi& vk = dev_.vk();
  VkDevice d = dev_.device();
  if (a->mapped) vk.vkUnmapMemory(d, a->memory);
  vk.vkDestroyBuffer(d, a->buffer, nullptr);
  vk.vkFreeMemory(d, a->memory, nullptr);
  delete a;
}

void VulkanAllocator::raw_write(const Raw& raw, size_t offset, const void* src, size_t n) {
  if (n == 0) return;
  auto* a = static_cast<Allocation*>(raw.extra);
  if (a->mapped) {
    stream_.finish();  // no recorded or running command may touch it while the host writes
    std::memcpy(static_cast<char*>(a->mapped) + offset, src, n);
  } else {
    stream_.write(a->buffer, offset, src, n);
  }
}

void VulkanAllocator::raw_read(const Raw& raw, size_t offset, void* dst, size_t n) {
  if (n == 0) return;
  auto* a = static_cast<Allocation*>(raw.extra);
  if (a->mapped) {
    stream_.finish();
    std::memcpy(dst, static_cast<const char*>(a->mapped) + offset, n);
  } else {
    stream_.read(a->buffer, offset, dst, n);
  }
}

}  // namespace attnbench::vulkan
