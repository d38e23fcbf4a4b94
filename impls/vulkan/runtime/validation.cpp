#include "validation.h"

#include "attnbench/error.h"

namespace attnbench::vulkan {

namespace {
const VkValidationFeatureEnableEXT kEnables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
}

VkDebugUtilsMessengerCreateInfoEXT ValidationMessages::messenger_info() {
  VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = &ValidationMessages::callback;
  info.pUserData = this;
  return info;
}

VkValidationFeaturesEXT ValidationMessages::features_info() {
  VkValidationFeaturesEXT f{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  f.enabledValidationFeatureCount = static_cast<uint32_t>(std::size(kEnables));
  f.pEnabledValidationFeatures = kEnables;
  return f;
}

VkBool32 ValidationMessages::callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                      VkDebugUtilsMessageTypeFlagsEXT types,
                                      const VkDebugUtilsMessengerCallbackDataEXT* data, void* self) {
  // The loader reports on the GENERAL channel too (e.g. a driver manifest it could not load); its
  // warnings describe the machine, not this program, so only its errors count.
  const bool general_only = (types & ~VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT) == 0;
  if (general_only && severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) return VK_FALSE;
  std::string msg = cat(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning", " [",
                        data->pMessageIdName ? data->pMessageIdName : "?", "] ",
                        data->pMessage ? data->pMessage : "");
  for (char& ch : msg)
    if (ch == '\n') ch = ' ';
  auto* me = static_cast<ValidationMessages*>(self);
  std::lock_guard lock(me->mu_);
  me->pending_.push_back(std::move(msg));
  ++me->total_;
  return VK_FALSE;  // the call proceeds, as the layer's own default does
}

std::vector<std::string> ValidationMessages::take() {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.swap(pending_);
  return out;
}

void ValidationMessages::raise_pending() {
  const auto msgs = take();
  if (msgs.empty()) return;
  std::string text = cat("vulkan validation: ", msgs.front());
  if (msgs.size() > 1) text += cat(" (and ", msgs.size() - 1, " more: ", msgs[1].substr(0, 200), msgs.size() > 2 ? " ..." : "", ")");
  throw BackendError(text);
}

size_t ValidationMessages::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

}  // namespace attnbench::vulkan
