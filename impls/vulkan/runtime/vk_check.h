// Vulkan errors become BackendError (harness/include/attnbench/error.h): the harness turns them into an `error` row
// naming the call and the VkResult, out-of-memory included, and the run goes on.
//   ATTNBENCH_VK_CHECK(vk.vkAllocateMemory(...));
//   -> "vulkan: vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (vulkan_allocator.cpp:57)"
// Any result other than VK_SUCCESS fails (VK_TIMEOUT, VK_INCOMPLETE ... are handled where expected).
// Destructors use ATTNBENCH_VK_CHECK_NOEXCEPT, which only reports to stderr.
#pragma once

#include <cstdio>
#include <cstring>

#include "attnbench/error.h"
#include "vk_api.h"

namespace attnbench::vulkan::detail {

[[noreturn]] void throw_vk_error(const char* call, VkResult r, const char* file, int line);
void report_vk_error(const char* call, VkResult r, const char* file, int line) noexcept;

// "vkAllocateMemory" from "vk.vkAllocateMemory(device, &info, nullptr, &memory)".
const char* call_name(const char* expr, char* buf, size_t n) noexcept;

}  // namespace attnbench::vulkan::detail

#define ATTNBENCH_VK_CHECK(call)                                                             \
  do {                                                                                       \
    const VkResult attnbench_vk_result_ = (call);                                            \
    if (attnbench_vk_result_ != VK_SUCCESS)                                                  \
      ::attnbench::vulkan::detail::throw_vk_error(#call, attnbench_vk_result_, __FILE__, __LINE__); \
  } while (0)

#define ATTNBENCH_VK_CHECK_NOEXCEPT(call)                                                    \
  do {                                                                                       \
    const VkResult attnbench_vk_result_ = (call);                                            \
    if (attnbench_vk_result_ != VK_SUCCESS)                                                  \
      ::attnbench::vulkan::detail::report_vk_error(#call, attnbench_vk_result_, __FILE__, __LINE__); \
  } while (0)
