// One Vulkan device opened for attnbench: the instance (with validation when asked), the chosen
// physical device, a logical device with one compute queue, and the capabilities the shaders and
// the impls' supports() read.
//
// Device choice: vulkan.device=N (ATTNBENCH_VULKAN_DEVICE) picks device N of the instance's list;
// otherwise the first discrete GPU, else integrated, virtual, other, and last a CPU device such
// as Mesa's lavapipe. Only devices with Vulkan 1.2 and a compute queue are usable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attnbench/json.h"
#include "validation.h"
#include "vk_api.h"

namespace attnbench::vulkan {

struct CoopMatShape {
  uint32_t m, n, k;
};

// What the device offers, read once when it is opened.
struct DeviceCaps {
  VkPhysicalDeviceProperties props{};
  std::string driver_name, driver_info;
  VkDriverId driver_id = static_cast<VkDriverId>(0);
  uint32_t subgroup_size = 0, min_subgroup_size = 0, max_subgroup_size = 0;
  VkSubgroupFeatureFlags subgroup_ops = 0;
  bool full_subgroups = false;      // pipelines may require full subgroups (subgroupSizeControl, computeFullSubgroups)
  bool storage16 = false;           // 16-bit storage buffer access
  bool int16 = false, int8 = false, float16 = false;
  bool float64 = false;             // shaderFloat64: rope's range reduction
  bool memory_model = false;        // Vulkan memory model (cooperative-matrix shaders use it)
  bool explicit_layout16 = false;   // VK_KHR_workgroup_memory_explicit_layout with 16-bit access
  bool memory_budget = false;       // VK_EXT_memory_budget
  bool coopmat_nv = false;          // VK_NV_cooperative_matrix enabled
  std::vector<CoopMatShape> coopmat_f16;  // subgroup shapes with A, B f16 and C, D f32
  uint32_t compute_units = 0;
  std::string compute_units_source;  // how compute_units was found
  uint32_t queue_family = 0;
  uint32_t timestamp_bits = 0;
  double timestamp_period_ns = 1;
  uint64_t max_allocation = 0;       // largest single buffer
  uint64_t device_memory = 0;        // device-local heap bytes
  bool discrete() const { return props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU; }
  bool cpu() const { return props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; }
};

class Device {
 public:
  // Opens the device. `device_option` is vulkan.device ("" = choose); BackendError when no usable
  // Vulkan device exists (probe reports it), InputError for a bad option (exit 2).
  Device(const std::string& device_option, bool validation);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const VkApi& vk() const { return vk_; }
  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical() const { return physical_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  const DeviceCaps& caps() const { return caps_; }
  bool validation() const { return validation_ != nullptr; }
  ValidationMessages* messages() { return validation_.get(); }
  // Driver, versions, the device list, memory heaps and budgets, as recorded in results.
  Json details() const;
  // Per heap: bytes this process may still allocate (VK_EXT_memory_budget), or ~0 when unknown.
  uint64_t heap_headroom(uint32_t heap) const;

 private:
  void create_instance();
  void choose_physical(const std::string& device_option);
  void read_caps();
  void create_device();

  VkApi vk_;
  std::unique_ptr<ValidationMessages> validation_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  DeviceCaps caps_;
  uint32_t chosen_ = 0;
  Json device_list_ = Json::array();
  std::vector<std::string> enabled_extensions_;
};

}  // namespace attnbench::vulkan
