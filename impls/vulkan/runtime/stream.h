// The backend's one stream of work: a command buffer recorded in order and submitted to the
// compute queue when the harness synchronizes (or a timer or a transfer needs the results).
//
// Ordering is simple and total: every recorded command (dispatch, copy, fill) is preceded by a
// memory barrier from all earlier compute and transfer writes to all later compute and transfer
// accesses, and every submission ends with a barrier making device writes visible to the host.
// Kernels of one impl depend on each other anyway, so nothing is lost by it, and synchronization
// validation has nothing to find in a correct impl.
#pragma once

#include <cstdint>

#include "device.h"

namespace attnbench::vulkan {

class Stream {
 public:
  explicit Stream(Device& device);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // The command buffer being recorded, begun on first use.
  VkCommandBuffer commands();
  // A barrier ordering the next command after every earlier one (recorded by dispatch and copy).
  void barrier();
  // Records the dispatch of a bound pipeline and descriptor set after a barrier.
  void dispatch(VkPipeline pipeline, VkPipelineLayout layout, VkDescriptorSet set, const void* push, uint32_t push_bytes,
                uint32_t groups_x, uint32_t groups_y);
  // Ends, submits and waits for what was recorded (no-op when nothing was); raises validation
  // messages as BackendError.
  void finish();
  // The submission of finish() for destructors: reports errors instead of throwing.
  void finish_noexcept() noexcept;
  bool recording() const { return recording_; }

  // Host <-> buffer transfers through a staging buffer (blocking).
  void write(VkBuffer dst, uint64_t offset, const void* src, uint64_t bytes);
  void read(VkBuffer src, uint64_t offset, void* dst, uint64_t bytes);
  // Fills [offset, offset + bytes) of a buffer with a 32-bit pattern (recorded, not waited for).
  void fill(VkBuffer dst, uint64_t offset, uint64_t bytes, uint32_t pattern);

  // Timestamps (DeviceTimer): two marks around recorded work, written when all earlier commands
  // have completed; elapsed() finishes the stream and scales ticks by timestampPeriod.
  bool has_timestamps() const { return query_pool_ != VK_NULL_HANDLE; }
  void mark_start();
  void mark_stop();
  double elapsed_seconds();

 private:
  void submit_and_wait();
  void ensure_staging();
  Device& dev_;
  const VkApi& vk_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool query_pool_ = VK_NULL_HANDLE;
  bool recording_ = false;
  bool marks_written_ = false;
  VkBuffer staging_ = VK_NULL_HANDLE;
  VkDeviceMemory staging_memory_ = VK_NULL_HANDLE;
  void* staging_map_ = nullptr;
  uint64_t staging_bytes_ = 0;
};

// The index of a memory type allowed by `type_bits` with all of `required` and as many of
// `preferred` as possible (and none of `avoided` where that is possible); ~0u if none qualifies.
uint32_t choose_memory_type(const VkPhysicalDeviceMemoryProperties& mem, uint32_t type_bits, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred, VkMemoryPropertyFlags avoided = 0);

}  // namespace attnbench::vulkan
