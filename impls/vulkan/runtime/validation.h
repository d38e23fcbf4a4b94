// Validation (docs/design.md "Backends"): with vulkan.validation=1 (ATTNBENCH_VULKAN_VALIDATION=1, which the
// project's Vulkan tests set) the instance enables the Khronos validation layer with
// synchronization validation, and a VK_EXT_debug_utils messenger collects every warning and error.
//
// A collected message fails the case that produced it: the backend calls raise_pending() after
// each submission, upload and download, which throws BackendError (an `error` row) carrying the
// messages. A message that arrives outside any case (at teardown) is printed and the process
// exits 1 (see VulkanBackend's destructor), so no message can pass unnoticed.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "vk_api.h"

namespace attnbench::vulkan {

inline constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

class ValidationMessages {
 public:
  // Chained into VkInstanceCreateInfo (so instance creation is covered too) and used to create
  // the instance's messenger.
  VkDebugUtilsMessengerCreateInfoEXT messenger_info();
  static VkValidationFeaturesEXT features_info();

  std::vector<std::string> take();  // messages since the last take, oldest first
  void raise_pending();             // throws BackendError if any message is pending
  size_t total() const;             // every message collected so far

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                  VkDebugUtilsMessageTypeFlagsEXT types,
                                                  const VkDebugUtilsMessengerCallbackDataEXT* data, void* self);
  mutable std::mutex mu_;
  std::vector<std::string> pending_;
  size_t total_ = 0;
};

}  // namespace attnbench::vulkan
