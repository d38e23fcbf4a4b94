#include "vk_api.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "attnbench/error.h"
#include "vk_check.h"

namespace attnbench::vulkan {

namespace {

// The loader is opened once per process and never closed: drivers and layers keep threads and
// atexit handlers that must not outlive their code.
void* loader_library() {
  static void* const handle = [] {
    void* h = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    return h;
  }();
  return handle;
}

}  // namespace

void VkApi::load_global() {
  void* lib = loader_library();
  if (!lib) throw BackendError("vulkan: the Vulkan loader libvulkan.so.1 is not installed (no Vulkan here)");
  vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!vkGetInstanceProcAddr) throw BackendError("vulkan: libvulkan.so.1 has no vkGetInstanceProcAddr");
#define ATTNBENCH_VK_LOAD(name)                                                               \
  name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(nullptr, #name));                 \
  if (!name) throw BackendError("vulkan: the loader does not provide " #name " (Vulkan 1.1 or later is needed)");
  ATTNBENCH_VK_GLOBAL_FUNCTIONS(ATTNBENCH_VK_LOAD)
#undef ATTNBENCH_VK_LOAD
}

void VkApi::load_instance(VkInstance instance) {
#define ATTNBENCH_VK_LOAD(name)                                                               \
  name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name));                \
  if (!name) throw BackendError("vulkan: the instance does not provide " #name);
  ATTNBENCH_VK_INSTANCE_FUNCTIONS(ATTNBENCH_VK_LOAD)
#undef ATTNBENCH_VK_LOAD
#define ATTNBENCH_VK_LOAD_OPTIONAL(name) name = reinterpret_cast<PFN_##name>(vkGetInstanceProcAddr(instance, #name));
  ATTNBENCH_VK_OPTIONAL_INSTANCE_FUNCTIONS(ATTNBENCH_VK_LOAD_OPTIONAL)
#undef ATTNBENCH_VK_LOAD_OPTIONAL
}

void VkApi::load_device(VkDevice device) {
#define ATTNBENCH_VK_LOAD(name)                                                               \
  name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(device, #name));                    \
  if (!name) throw BackendError("vulkan: the device does not provide " #name);
  ATTNBENCH_VK_DEVICE_FUNCTIONS(ATTNBENCH_VK_LOAD)
#undef ATTNBENCH_VK_LOAD
}

std::string result_name(VkResult r) {
  switch (r) {
#define ATTNBENCH_VK_RESULT(x) \
  case x: return #x;
    ATTNBENCH_VK_RESULT(VK_SUCCESS)
    ATTNBENCH_VK_RESULT(VK_NOT_READY)
    ATTNBENCH_VK_RESULT(VK_TIMEOUT)
    ATTNBENCH_VK_RESULT(VK_EVENT_SET)
    ATTNBENCH_VK_RESULT(VK_EVENT_RESET)
    ATTNBENCH_VK_RESULT(VK_INCOMPLETE)
    ATTNBENCH_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    ATTNBENCH_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    ATTNBENCH_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    ATTNBENCH_VK_RESULT(VK_ERROR_DEVICE_LOST)
    ATTNBENCH_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    ATTNBENCH_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    ATTNBENCH_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    ATTNBENCH_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    ATTNBENCH_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    ATTNBENCH_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    ATTNBENCH_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    ATTNBENCH_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    ATTNBENCH_VK_RESULT(VK_ERROR_UNKNOWN)
    ATTNBENCH_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    ATTNBENCH_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    ATTNBENCH_VK_RESULT(VK_ERROR_FRAGMENTATION)
    ATTNBENCH_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    ATTNBENCH_VK_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
    ATTNBENCH_VK_RESULT(VK_ERROR_VALIDATION_FAILED_EXT)
    ATTNBENCH_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef ATTNBENCH_VK_RESULT
    default: return cat("VkResult(", static_cast<int>(r), ")");
  }
}

std::string version_string(uint32_t v) {
  return cat(VK_API_VERSION_MAJOR(v), ".", VK_API_VERSION_MINOR(v), ".", VK_API_VERSION_PATCH(v));
}

namespace detail {

const char* call_name(const char* expr, char* buf, size_t n) noexcept {
  // The function name is the identifier starting "vk" right before the first '('.
  const char* paren = std::strchr(expr, '(');
  const char* end = paren ? paren : expr + std::strlen(expr);
  const char* start = end;
  while (start > expr && (std::isalnum(static_cast<unsigned char>(start[-1])) || start[-1] == '_')) --start;
  const size_t len = std::min(static_cast<size_t>(end - start), n - 1);
  std::memcpy(buf, start, len);
  buf[len] = '\0';
  return buf;
}

void throw_vk_error(const char* call, VkResult r, const char* file, int line) {
  char name[96];
  const char* base = std::strrchr(file, '/');
  throw BackendError(cat("vulkan: ", call_name(call, name, sizeof name), " failed: ", result_name(r), " (",
                         base ? base + 1 : file, ":", line, ")"));
}

void report_vk_error(const char* call, VkResult r, const char* file, int line) noexcept {
  char name[96];
  const char* base = std::strrchr(file, '/');
  std::fprintf(stderr, "attnbench: vulkan: %s failed: %s (%s:%d)\n", call_name(call, name, sizeof name),
               result_name(r).c_str(), base ? base + 1 : file, line);
}

}  // namespace detail

}  // namespace attnbench::vulkan
