// The Vulkan entry points the backend uses, loaded at run time from the loader library
// (libvulkan.so.1) with dlopen, so a binary built with Vulkan starts on a machine without it and
// probe() can say why Vulkan is unavailable instead of the dynamic linker refusing to start.
//
// Every function is reached through a VkApi table: global and instance functions through
// vkGetInstanceProcAddr, device functions through vkGetDeviceProcAddr of the one device.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace attnbench::vulkan {

#define ATTNBENCH_VK_GLOBAL_FUNCTIONS(X) \
  X(vkCreateInstance)                    \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkEnumerateInstanceLayerProperties)  \
  X(vkEnumerateInstanceVersion)

#define ATTNBENCH_VK_INSTANCE_FUNCTIONS(X)    \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceMemoryProperties2)     \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

// Present only when their extension is: checked before use.
#define ATTNBENCH_VK_OPTIONAL_INSTANCE_FUNCTIONS(X) \
  X(vkCreateDebugUtilsMessengerEXT)                 \
  X(vkDestroyDebugUtilsMessengerEXT)                \
  X(vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)

#define ATTNBENCH_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                     \
  X(vkGetDeviceQueue)                    \
  X(vkDeviceWaitIdle)                    \
  X(vkQueueSubmit)                       \
  X(vkQueueWaitIdle)                     \
  X(vkCreateCommandPool)                 \
  X(vkDestroyCommandPool)                \
  X(vkResetCommandPool)                  \
  X(vkAllocateCommandBuffers)            \
  X(vkBeginCommandBuffer)                \
  X(vkEndCommandBuffer)                  \
  X(vkCreateFence)                       \
  X(vkDestroyFence)                      \
  X(vkWaitForFences)                     \
  X(vkResetFences)                       \
  X(vkCreateBuffer)                      \
  X(vkDestroyBuffer)                     \
  X(vkGetBufferMemoryRequirements)       \
  X(vkAllocateMemory)                    \
  X(vkFreeMemory)                        \
  X(vkBindBufferMemory)                  \
  X(vkMapMemory)                         \
  X(vkUnmapMemory)                       \
  X(vkCreateShaderModule)                \
  X(vkDestroyShaderModule)               \
  X(vkCreateDescriptorSetLayout)         \
  X(vkDestroyDescriptorSetLayout)        \
  X(vkCreatePipelineLayout)              \
  X(vkDestroyPipelineLayout)             \
  X(vkCreateComputePipelines)            \
  X(vkDestroyPipeline)                   \
  X(vkCreateDescriptorPool)              \
  X(vkDestroyDescriptorPool)             \
  X(vkAllocateDescriptorSets)            \
  X(vkFreeDescriptorSets)                \
  X(vkUpdateDescriptorSets)              \
  X(vkCreateQueryPool)                   \
  X(vkDestroyQueryPool)                  \
  X(vkGetQueryPoolResults)               \
  X(vkCmdResetQueryPool)                 \
  X(vkCmdWriteTimestamp)                 \
  X(vkCmdBindPipeline)                   \
  X(vkCmdBindDescriptorSets)             \
  X(vkCmdPushConstants)                  \
  X(vkCmdDispatch)                       \
  X(vkCmdPipelineBarrier)                \
  X(vkCmdCopyBuffer)                     \
  X(vkCmdFillBuffer)

struct VkApi {
#define ATTNBENCH_VK_DECLARE(name) PFN_##name name = nullptr;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  ATTNBENCH_VK_GLOBAL_FUNCTIONS(ATTNBENCH_VK_DECLARE)
  ATTNBENCH_VK_INSTANCE_FUNCTIONS(ATTNBENCH_VK_DECLARE)
  ATTNBENCH_VK_OPTIONAL_INSTANCE_FUNCTIONS(ATTNBENCH_VK_DECLARE)
  ATTNBENCH_VK_DEVICE_FUNCTIONS(ATTNBENCH_VK_DECLARE)
#undef ATTNBENCH_VK_DECLARE

  // Opens the loader and resolves the global functions; throws BackendError naming what is missing.
  void load_global();
  void load_instance(VkInstance instance);  // throws BackendError for a missing required function
  void load_device(VkDevice device);
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY", or "VkResult(-13)" for a code this build does not know.
std::string result_name(VkResult r);
// "1.3.239"
std::string version_string(uint32_t v);

}  // namespace attnbench::vulkan
