// The Vulkan backend (docs/design.md "Contracts", "Backends"): Device (instance, device choice, capabilities), Stream
// (ordered command recording, submission, staging transfers, timestamps), a tracked allocator,
// cached pipelines and bound pipelines, and the peaks probe.
//
// Options (attnbench env lists them):
//   vulkan.device=N      ATTNBENCH_VULKAN_DEVICE      device index (default: the best one)
//   vulkan.validation=1  ATTNBENCH_VULKAN_VALIDATION  Khronos validation + synchronization
//                                                     validation; any message fails the case
//   vulkan.splits=N      ATTNBENCH_VULKAN_SPLITS      force N KV splits (0: chosen per device)
// Impls reach it through as_vulkan(backend).
#pragma once

#include <memory>
#include <optional>

#include "attnbench/backend.h"
#include "device.h"
#include "pipelines.h"
#include "stream.h"
#include "vulkan_allocator.h"

namespace attnbench::vulkan {

class VulkanBackend final : public Backend {
 public:
  VulkanBackend();
  ~VulkanBackend() override;

  std::string name() const override { return "vulkan"; }
  std::vector<BackendOption> options() const override;
  Probe probe() override;
  Allocator& allocator() override;
  void upload(const HostTensor& src, Buffer& dst) override;
  void download(const Buffer& src, HostTensor& dst) override;
  DeviceTimer& timer() override;
  void synchronize() override;
  Peaks measure_peaks() override;
  size_t cache_bytes() const override;
  bool flush_cache() override;
  Json telemetry() override;

  // --- for impls and tests (valid once probe() said available) ----------------------------------
  Device& device();
  Stream& stream();
  const DeviceCaps& caps() { return device().caps(); }
  const Pipeline& pipeline(const std::string& shader, const std::vector<uint32_t>& constants, uint32_t bindings);
  std::unique_ptr<BoundPipeline> bind(const Pipeline& p, const std::vector<const Buffer*>& buffers);
  // Records `groups` workgroups of the bound pipeline (see pipelines.h for the indexing
  // convention); `push` is the shader's push-constant block, size checked against the shader's.
  template <typename Push>
  void dispatch(const BoundPipeline& k, const Push& push, uint64_t groups) {
    dispatch_bytes(k, &push, sizeof(Push), groups);
  }

 private:
  class Timer;
  void open();
  void dispatch_bytes(const BoundPipeline& k, const void* push, uint32_t push_bytes, uint64_t groups);
  std::optional<Probe> probe_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<Pipelines> pipelines_;
  std::unique_ptr<VulkanAllocator> allocator_;
  std::unique_ptr<Timer> timer_;
  BufferPtr flush_buffer_;
};

// Every impl of this backend receives the VulkanBackend it was prepared on.
VulkanBackend& as_vulkan(Backend& b);

// Peaks of the device (vulkan_peaks.cpp).
Peaks measure_vulkan_peaks(VulkanBackend& be);

}  // namespace attnbench::vulkan
