#include "stream.h"

#include <algorithm>
#include <cstring>

#include "vk_check.h"

namespace attnbench::vulkan {

namespace {
constexpr VkPipelineStageFlags kDeviceStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kDeviceWrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kDeviceAccesses =
    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
// A fence wait longer than this is reported as a hung device (the harness's own timeouts are shorter).
constexpr uint64_t kFenceTimeoutNs = 900ull * 1000 * 1000 * 1000;
constexpr uint64_t kStagingBytes = uint64_t{64} << 20;
}  // namespace

uint32_t choose_memory_type(const VkPhysicalDeviceMemoryProperties& mem, uint32_t type_bits, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags avoided) {
  uint32_t best = ~0u;
  int best_score = -1;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
    if (!(type_bits & (1u << i)) || (f & required) != required) continue;
    const int score = 4 * __builtin_popcount(f & preferred) + ((f & avoided) ? 0 : 2);
    if (score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

Stream::Stream(Device& device) : dev_(device), vk_(device.vk()) {
  VkDevice d = dev_.device();
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool.queueFamilyIndex = dev_.caps().queue_family;
  ATTNBENCH_VK_CHECK(vk_.vkCreateCommandPool(d, &pool, nullptr, &pool_));
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  ATTNBENCH_VK_CHECK(vk_.vkAllocateCommandBuffers(d, &alloc, &cmd_));
  VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  ATTNBENCH_VK_CHECK(vk_.vkCreateFence(d, &fence, nullptr, &fence_));
  if (dev_.caps().timestamp_bits > 0) {
    VkQueryPoolCreateInfo q{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    q.queryType = VK_QUERY_TYPE_TIMESTAMP;
    q.queryCount = 2;
    ATTNBENCH_VK_CHECK(vk_.vkCreateQueryPool(d, &q, nullptr, &query_pool_));
  }
}

Stream::~Stream() {
  finish_noexcept();
  VkDevice d = dev_.device();
  if (staging_map_) vk_.vkUnmapMemory(d, staging_memory_);
  if (staging_) vk_.vkDestroyBuffer(d, staging_, nullptr);
  if (staging_memory_) vk_.vkFreeMemory(d, staging_memory_, nullptr);
  if (query_pool_) vk_.vkDestroyQueryPool(d, query_pool_, nullptr);
  if (fence_) vk_.vkDestroyFence(d, fence_, nullptr);
  if (pool_) vk_.vkDestroyCommandPool(d, pool_, nullptr);
}

VkCommandBuffer Stream::commands() {
  if (!recording_) {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    ATTNBENCH_VK_CHECK(vk_.vkBeginCommandBuffer(cmd_, &begin));
    recording_ = true;
  }
  return cmd_;
}

void Stream::barrier() {
  // The first barrier of a command buffer orders it after earlier submissions too: a barrier's
  // first scope is every command earlier in submission order on the queue.
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = kDeviceWrites;
  b.dstAccessMask = kDeviceAccesses;
  vk_.vkCmdPipelineBarrier(commands(), kDeviceStages, kDeviceStages, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void Stream::dispatch(VkPipeline pipeline, VkPipelineLayout layout, VkDescriptorSet set, const void* push,
                      uint32_t push_bytes, uint32_t groups_x, uint32_t groups_y) {
  VkCommandBuffer cb = commands();
  barrier();
  vk_.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vk_.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
  if (push_bytes) vk_.vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vk_.vkCmdDispatch(cb, groups_x, groups_y, 1);
}

void Stream::fill(VkBuffer dst, uint64_t offset, uint64_t bytes, uint32_t pattern) {
  VkCommandBuffer cb = commands();
  barrier();
  vk_.vkCmdFillBuffer(cb, dst, offset, bytes, pattern);
}

void Stream::finish() {
  submit_and_wait();
  if (dev_.messages()) dev_.messages()->raise_pending();
}

void Stream::finish_noexcept() noexcept {
  // Validation messages stay pending: the next finish() raises them against the next case, or
  // the device's teardown reports them.
  try {
    submit_and_wait();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnbench: %s\n", e.what());
  }
}

void Stream::submit_and_wait() {
  if (!recording_) return;
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = kDeviceWrites;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  vk_.vkCmdPipelineBarrier(cmd_, kDeviceStages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
  recording_ = false;
  VkDevice d = dev_.device();
  const VkResult end = vk_.vkEndCommandBuffer(cmd_);
  if (end != VK_SUCCESS) {
    vk_.vkResetCommandPool(d, pool_, 0);
    ATTNBENCH_VK_CHECK(end);
  }
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd_;
  const VkResult sub = vk_.vkQueueSubmit(dev_.queue(), 1, &submit, fence_);
  if (sub != VK_SUCCESS) {
    vk_.vkResetCommandPool(d, pool_, 0);
    ATTNBENCH_VK_CHECK(sub);
  }
  const VkResult wait = vk_.vkWaitForFences(d, 1, &fence_, VK_TRUE, kFenceTimeoutNs);
  if (wait == VK_SUCCESS) {
    vk_.vkResetFences(d, 1, &fence_);
    ATTNBENCH_VK_CHECK(vk_.vkResetCommandPool(d, pool_, 0));
  }
  ATTNBENCH_VK_CHECK(wait);  // a timeout or a lost device: every later case errors too
}

void Stream::ensure_staging() {
  if (staging_) return;
  VkDevice d = dev_.device();
  staging_bytes_ = std::min<uint64_t>(kStagingBytes, dev_.caps().max_allocation);
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = staging_bytes_;
  info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ATTNBENCH_VK_CHECK(vk_.vkCreateBuffer(d, &info, nullptr, &staging_));
  VkMemoryRequirements req{};
  vk_.vkGetBufferMemoryRequirements(d, staging_, &req);
  VkPhysicalDeviceMemoryProperties mem{};
  vk_.vkGetPhysicalDeviceMemoryProperties(dev_.physical(), &mem);
  const uint32_t type = choose_memory_type(mem, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                           VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (type == ~0u) throw BackendError("vulkan: no host-visible coherent memory type for the staging buffer");
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  ATTNBENCH_VK_CHECK(vk_.vkAllocateMemory(d, &alloc, nullptr, &staging_memory_));
  ATTNBENCH_VK_CHECK(vk_.vkBindBufferMemory(d, staging_, staging_memory_, 0));
  ATTNBENCH_VK_CHECK(vk_.vkMapMemory(d, staging_memory_, 0, VK_WHOLE_SIZE, 0, &staging_map_));
}

void Stream::write(VkBuffer dst, uint64_t offset, const void* src, uint64_t bytes) {
  ensure_staging();
  finish();
  const auto* from = static_cast<const char*>(src);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = std::min(staging_bytes_, bytes - done);
    std::memcpy(staging_map_, from + done, n);
    const VkBufferCopy region{0, offset + done, n};
    VkCommandBuffer cb = commands();
    barrier();
    vk_.vkCmdCopyBuffer(cb, staging_, dst, 1, &region);
    finish();
    done += n;
  }
}

void Stream::read(VkBuffer src, uint64_t offset, void* dst, uint64_t bytes) {
  ensure_staging();
  finish();
  auto* to = static_cast<char*>(dst);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = std::min(staging_bytes_, bytes - done);
    const VkBufferCopy region{offset + done, 0, n};
    VkCommandBuffer cb = commands();
    barrier();
    vk_.vkCmdCopyBuffer(cb, src, staging_, 1, &region);
    finish();
    std::memcpy(to + done, staging_map_, n);
    done += n;
  }
}

void Stream::mark_start() {
  VkCommandBuffer cb = commands();
  vk_.vkCmdResetQueryPool(cb, query_pool_, 0, 2);
  vk_.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 0);
  marks_written_ = false;
}

void Stream::mark_stop() {
  vk_.vkCmdWriteTimestamp(commands(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_, 1);
  marks_written_ = true;
}

double Stream::elapsed_seconds() {
  ATTNBENCH_ASSERT(marks_written_, "the Vulkan timer was read without a start and a stop mark");
  finish();
  uint64_t ticks[2] = {0, 0};
  ATTNBENCH_VK_CHECK(vk_.vkGetQueryPoolResults(dev_.device(), query_pool_, 0, 2, sizeof ticks, ticks, sizeof ticks[0],
                                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  const uint32_t bits = dev_.caps().timestamp_bits;
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
  const uint64_t delta = (ticks[1] - ticks[0]) & mask;
  return static_cast<double>(delta) * dev_.caps().timestamp_period_ns * 1e-9;
}

}  // namespace attnbench::vulkan
