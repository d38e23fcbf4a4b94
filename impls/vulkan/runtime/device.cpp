#include "device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "attnbench/error.h"
#include "vk_check.h"

namespace attnbench::vulkan {

namespace {

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  return std::any_of(exts.begin(), exts.end(), [&](const auto& e) { return std::strcmp(e.extensionName, name) == 0; });
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

// Lower is preferred: a discrete GPU first, a CPU device (lavapipe) last.
int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_OTHER: return 3;
    default: return 4;
  }
}

// NVIDIA packs its driver version as 10.8.8.6 bits; everyone else uses the Vulkan encoding.
std::string driver_version_string(const VkPhysicalDeviceProperties& p) {
  const uint32_t v = p.driverVersion;
  if (p.vendorID == 0x10DE) return cat((v >> 22) & 0x3ff, ".", (v >> 14) & 0xff, ".", (v >> 6) & 0xff);
  return version_string(v);
}

std::vector<VkExtensionProperties> device_extensions(const VkApi& vk, VkPhysicalDevice pd) {
  uint32_t n = 0;
  ATTNBENCH_VK_CHECK(vk.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr));
  std::vector<VkExtensionProperties> exts(n);
  ATTNBENCH_VK_CHECK(vk.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data()));
  exts.resize(n);
  return exts;
}

// The first queue family with compute, preferring one that also has timestamps.
bool compute_family(const VkApi& vk, VkPhysicalDevice pd, uint32_t* family, uint32_t* timestamp_bits) {
  uint32_t n = 0;
  vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vk.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
  int best = -1;
  for (uint32_t i = 0; i < n; ++i) {
    if (!(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (best < 0 || (fams[best].timestampValidBits == 0 && fams[i].timestampValidBits > 0)) best = static_cast<int>(i);
  }
  if (best < 0) return false;
  *family = static_cast<uint32_t>(best);
  *timestamp_bits = fams[best].timestampValidBits;
  return true;
}

}  // namespace

Device::Device(const std::string& device_option, bool validation) {
  vk_.load_global();
  if (validation) validation_ = std::make_unique<ValidationMessages>();
  try {
    create_instance();
    choose_physical(device_option);
    read_caps();
    create_device();
  } catch (...) {
    if (device_) vk_.vkDestroyDevice(device_, nullptr);
    if (messenger_) vk_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
    if (instance_) vk_.vkDestroyInstance(instance_, nullptr);
    throw;
  }
}

Device::~Device() {
  if (device_) {
    vk_.vkDeviceWaitIdle(device_);
    vk_.vkDestroyDevice(device_, nullptr);
  }
  if (messenger_) vk_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_) vk_.vkDestroyInstance(instance_, nullptr);
  // A message no case could raise (objects leaked at teardown, say) still fails the process.
  if (validation_) {
    const auto late = validation_->take();
    for (const auto& m : late) std::fprintf(stderr, "attnbench: vulkan validation at teardown: %s\n", m.c_str());
    if (!late.empty()) {
      std::fflush(nullptr);
      std::_Exit(1);
    }
  }
}

void Device::create_instance() {
  uint32_t loader_version = VK_API_VERSION_1_0;
  ATTNBENCH_VK_CHECK(vk_.vkEnumerateInstanceVersion(&loader_version));
  if (loader_version < VK_API_VERSION_1_2)
    throw BackendError(cat("vulkan: the loader offers Vulkan ", version_string(loader_version), "; 1.2 or later is needed"));

  uint32_t n = 0;
  ATTNBENCH_VK_CHECK(vk_.vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr));
  std::vector<VkExtensionProperties> exts(n);
  ATTNBENCH_VK_CHECK(vk_.vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data()));
  exts.resize(n);

  std::vector<const char*> layers, extensions;
  VkInstanceCreateFlags flags = 0;
  if (has_extension(exts, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  VkValidationFeaturesEXT features = ValidationMessages::features_info();
  const void* next = nullptr;
  if (validation_) {
    uint32_t nl = 0;
    ATTNBENCH_VK_CHECK(vk_.vkEnumerateInstanceLayerProperties(&nl, nullptr));
    std::vector<VkLayerProperties> found(nl);
    ATTNBENCH_VK_CHECK(vk_.vkEnumerateInstanceLayerProperties(&nl, found.data()));
    found.resize(nl);
    if (std::none_of(found.begin(), found.end(), [](const auto& l) { return std::strcmp(l.layerName, kValidationLayer) == 0; }))
      throw InputError(cat("vulkan: validation was requested (vulkan.validation=1) but ", kValidationLayer,
                           " is not installed (Debian: vulkan-validationlayers)"));
    layers.push_back(kValidationLayer);
    uint32_t nle = 0;
    ATTNBENCH_VK_CHECK(vk_.vkEnumerateInstanceExtensionProperties(kValidationLayer, &nle, nullptr));
    std::vector<VkExtensionProperties> layer_exts(nle);
    ATTNBENCH_VK_CHECK(vk_.vkEnumerateInstanceExtensionProperties(kValidationLayer, &nle, layer_exts.data()));
    layer_exts.resize(nle);
    if (!has_extension(exts, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) && !has_extension(layer_exts, VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
      throw InputError("vulkan: validation was requested but VK_EXT_debug_utils is not offered, so messages cannot be collected");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    messenger_info = validation_->messenger_info();
    next = &messenger_info;
    if (has_extension(layer_exts, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      features.pNext = next;
      next = &features;
    } else {
      throw InputError("vulkan: the validation layer does not offer VK_EXT_validation_features, so synchronization validation cannot be enabled");
    }
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "attnbench";
  app.pEngineName = "attnbench";
  app.apiVersion = std::min<uint32_t>(loader_version, VK_API_VERSION_1_3);
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pNext = next;
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  const VkResult created = vk_.vkCreateInstance(&info, nullptr, &instance_);
  if (created == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw BackendError("vulkan: no Vulkan driver is installed for this machine (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)");
  ATTNBENCH_VK_CHECK(created);
  vk_.load_instance(instance_);
  if (validation_) {
    if (!vk_.vkCreateDebugUtilsMessengerEXT) throw BackendError("vulkan: vkCreateDebugUtilsMessengerEXT is missing");
    ATTNBENCH_VK_CHECK(vk_.vkCreateDebugUtilsMessengerEXT(instance_, &messenger_info, nullptr, &messenger_));
  }
}

void Device::choose_physical(const std::string& device_option) {
  uint32_t n = 0;
  ATTNBENCH_VK_CHECK(vk_.vkEnumeratePhysicalDevices(instance_, &n, nullptr));
  std::vector<VkPhysicalDevice> devices(n);
  if (n) ATTNBENCH_VK_CHECK(vk_.vkEnumeratePhysicalDevices(instance_, &n, devices.data()));
  if (n == 0) throw BackendError("vulkan: the loader found no Vulkan device (no driver installed for this machine's GPU, and no lavapipe)");

  std::string listing;
  std::vector<VkPhysicalDeviceProperties> props(n);
  std::vector<std::string> unusable(n);
  for (uint32_t i = 0; i < n; ++i) {
    vk_.vkGetPhysicalDeviceProperties(devices[i], &props[i]);
    uint32_t family = 0, bits = 0;
    if (props[i].apiVersion < VK_API_VERSION_1_2) unusable[i] = cat("offers Vulkan ", version_string(props[i].apiVersion), "; 1.2 is needed");
    else if (!compute_family(vk_, devices[i], &family, &bits)) unusable[i] = "has no compute queue";
    listing += cat(i ? ", " : "", i, " \"", props[i].deviceName, "\"");
    device_list_.push_back({{"index", i}, {"name", props[i].deviceName}, {"type", type_name(props[i].deviceType)},
                            {"api_version", version_string(props[i].apiVersion)}});
  }

  if (!device_option.empty()) {
    char* end = nullptr;
    const long idx = std::strtol(device_option.c_str(), &end, 10);
    if (end == device_option.c_str() || *end || idx < 0)
      throw InputError(cat("vulkan: ATTNBENCH_VULKAN_DEVICE=", device_option, " is not a device index (devices: ", listing, ")"));
    if (idx >= static_cast<long>(n))
      throw InputError(cat("vulkan: ATTNBENCH_VULKAN_DEVICE=", device_option, " is out of range (devices: ", listing, ")"));
    chosen_ = static_cast<uint32_t>(idx);
    if (!unusable[chosen_].empty())
      throw BackendError(cat("vulkan: device ", chosen_, " \"", props[chosen_].deviceName, "\" ", unusable[chosen_]));
  } else {
    int best = -1;
    for (uint32_t i = 0; i < n; ++i)
      if (unusable[i].empty() && (best < 0 || type_rank(props[i].deviceType) < type_rank(props[best].deviceType)))
        best = static_cast<int>(i);
    if (best < 0) {
      std::string why;
      for (uint32_t i = 0; i < n; ++i) why += cat(i ? "; " : "", i, " \"", props[i].deviceName, "\" ", unusable[i]);
      throw BackendError(cat("vulkan: no usable device (", why, ")"));
    }
    chosen_ = static_cast<uint32_t>(best);
  }
  physical_ = devices[chosen_];
  caps_.props = props[chosen_];
}

void Device::read_caps() {
  const auto exts = device_extensions(vk_, physical_);
  const bool api13 = caps_.props.apiVersion >= VK_API_VERSION_1_3;

  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maint3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties size_control{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceMaintenance4Properties maint4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props2.pNext = &subgroup;
  subgroup.pNext = &driver;
  driver.pNext = &maint3;
  void** tail = &maint3.pNext;
  if (api13) {
    *tail = &size_control;
    size_control.pNext = &maint4;
    tail = &maint4.pNext;
  }
  const bool has_sm = has_extension(exts, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  if (has_sm) {
    *tail = &sm;
    tail = &sm.pNext;
  }
  vk_.vkGetPhysicalDeviceProperties2(physical_, &props2);

  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV fcoop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR flayout{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &f11;
  f11.pNext = &f12;
  tail = &f12.pNext;
  if (api13) {
    *tail = &f13;
    tail = &f13.pNext;
  }
  const bool has_coop = has_extension(exts, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) && vk_.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV;
  if (has_coop) {
    *tail = &fcoop;
    tail = &fcoop.pNext;
  }
  const bool has_layout = has_extension(exts, VK_KHR_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_EXTENSION_NAME);
  if (has_layout) {
    *tail = &flayout;
    tail = &flayout.pNext;
  }
  vk_.vkGetPhysicalDeviceFeatures2(physical_, &f2);

  DeviceCaps& c = caps_;
  c.driver_name = driver.driverName;
  c.driver_id = driver.driverID;
  c.driver_info = driver.driverInfo;
  c.subgroup_size = subgroup.subgroupSize;
  c.subgroup_ops = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ? subgroup.supportedOperations : 0;
  c.min_subgroup_size = api13 && size_control.minSubgroupSize ? size_control.minSubgroupSize : subgroup.subgroupSize;
  c.max_subgroup_size = api13 && size_control.maxSubgroupSize ? size_control.maxSubgroupSize : subgroup.subgroupSize;
  c.full_subgroups = api13 && f13.subgroupSizeControl && f13.computeFullSubgroups;
  c.storage16 = f11.storageBuffer16BitAccess;
  c.int16 = f2.features.shaderInt16;
  c.float64 = f2.features.shaderFloat64;
  c.int8 = f12.shaderInt8;
  c.float16 = f12.shaderFloat16;
  c.memory_model = f12.vulkanMemoryModel;
  c.explicit_layout16 = has_layout && flayout.workgroupMemoryExplicitLayout && flayout.workgroupMemoryExplicitLayout16BitAccess;
  c.memory_budget = has_extension(exts, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  c.coopmat_nv = has_coop && fcoop.cooperativeMatrix && c.memory_model && c.float16;
  if (c.coopmat_nv) {
    uint32_t n = 0;
    ATTNBENCH_VK_CHECK(vk_.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(physical_, &n, nullptr));
    std::vector<VkCooperativeMatrixPropertiesNV> shapes(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
    ATTNBENCH_VK_CHECK(vk_.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(physical_, &n, shapes.data()));
    for (uint32_t i = 0; i < n; ++i) {
      const auto& s = shapes[i];
      if (s.scope == VK_SCOPE_SUBGROUP_NV && s.AType == VK_COMPONENT_TYPE_FLOAT16_NV && s.BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
          s.CType == VK_COMPONENT_TYPE_FLOAT32_NV && s.DType == VK_COMPONENT_TYPE_FLOAT32_NV)
        c.coopmat_f16.push_back({s.MSize, s.NSize, s.KSize});
    }
  }
  if (has_sm && sm.shaderSMCount) {
    c.compute_units = sm.shaderSMCount;
    c.compute_units_source = "VK_NV_shader_sm_builtins shaderSMCount";
  } else if (c.cpu()) {
    // lavapipe runs workgroups on LP_NUM_THREADS threads (default: every hardware thread).
    const char* lp = std::getenv("LP_NUM_THREADS");
    const long t = lp ? std::strtol(lp, nullptr, 10) : 0;
    c.compute_units = t > 0 ? static_cast<uint32_t>(t) : std::max(1u, std::thread::hardware_concurrency());
    c.compute_units_source = "CPU device: host threads";
  } else {
    c.compute_units = 32;
    c.compute_units_source = "not reported by this driver; assumed 32";
  }
  compute_family(vk_, physical_, &c.queue_family, &c.timestamp_bits);
  c.timestamp_period_ns = c.props.limits.timestampPeriod;

  VkPhysicalDeviceMemoryProperties mem{};
  vk_.vkGetPhysicalDeviceMemoryProperties(physical_, &mem);
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
    if (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) c.device_memory += mem.memoryHeaps[h].size;
  c.max_allocation = maint3.maxMemoryAllocationSize;
  if (api13 && maint4.maxBufferSize) c.max_allocation = std::min<uint64_t>(c.max_allocation, maint4.maxBufferSize);

  enabled_extensions_.clear();
  if (c.memory_budget) enabled_extensions_.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  if (c.coopmat_nv) enabled_extensions_.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (c.explicit_layout16) enabled_extensions_.push_back(VK_KHR_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_EXTENSION_NAME);
  if (has_extension(exts, "VK_KHR_portability_subset")) enabled_extensions_.push_back("VK_KHR_portability_subset");
}

void Device::create_device() {
  const DeviceCaps& c = caps_;
  const bool api13 = c.props.apiVersion >= VK_API_VERSION_1_3;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.storageBuffer16BitAccess = c.storage16;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.shaderFloat16 = c.float16;
  f12.shaderInt8 = c.int8;
  f12.vulkanMemoryModel = c.memory_model;
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
  f13.subgroupSizeControl = c.full_subgroups;
  f13.computeFullSubgroups = c.full_subgroups;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV fcoop{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  fcoop.cooperativeMatrix = VK_TRUE;
  VkPhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR flayout{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_FEATURES_KHR};
  flayout.workgroupMemoryExplicitLayout = VK_TRUE;
  flayout.workgroupMemoryExplicitLayout16BitAccess = VK_TRUE;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.features.shaderInt16 = c.int16;
  f2.features.shaderFloat64 = c.float64;
  f2.pNext = &f11;
  f11.pNext = &f12;
  void** tail = &f12.pNext;
  if (api13) {
    *tail = &f13;
    tail = &f13.pNext;
  }
  if (c.coopmat_nv) {
    *tail = &fcoop;
    tail = &fcoop.pNext;
  }
  if (c.explicit_layout16) {
    *tail = &flayout;
    tail = &flayout.pNext;
  }

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = c.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &f2;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  std::vector<const char*> extensions;
  for (const auto& e : enabled_extensions_) extensions.push_back(e.c_str());
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  ATTNBENCH_VK_CHECK(vk_.vkCreateDevice(physical_, &info, nullptr, &device_));
  vk_.load_device(device_);
  vk_.vkGetDeviceQueue(device_, c.queue_family, 0, &queue_);
}

uint64_t Device::heap_headroom(uint32_t heap) const {
  if (!caps_.memory_budget) return ~uint64_t{0};
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mem{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  mem.pNext = &budget;
  vk_.vkGetPhysicalDeviceMemoryProperties2(physical_, &mem);
  if (heap >= mem.memoryProperties.memoryHeapCount) return ~uint64_t{0};
  const uint64_t b = budget.heapBudget[heap], u = budget.heapUsage[heap];
  return b > u ? b - u : 0;
}

Json Device::details() const {
  const DeviceCaps& c = caps_;
  Json j = Json::object();
  j["api_version"] = version_string(c.props.apiVersion);
  j["driver_version"] = driver_version_string(c.props);
  j["driver_name"] = c.driver_name;
  j["driver_info"] = c.driver_info;
  char ids[32];
  std::snprintf(ids, sizeof ids, "0x%04x:0x%04x", c.props.vendorID, c.props.deviceID);
  j["vendor_device_id"] = ids;
  j["device_type"] = type_name(c.props.deviceType);
  j["device_index"] = chosen_;
  j["devices"] = device_list_;
  j["validation"] = validation();
  j["subgroup_size"] = c.subgroup_size;
  j["subgroup_size_range"] = {c.min_subgroup_size, c.max_subgroup_size};
  j["full_subgroups"] = c.full_subgroups;
  j["compute_units_source"] = c.compute_units_source;
  j["timestamp_period_ns"] = c.timestamp_period_ns;
  j["timestamp_valid_bits"] = c.timestamp_bits;
  j["extensions"] = enabled_extensions_;
  Json shapes = Json::array();
  for (const auto& s : c.coopmat_f16) shapes.push_back(cat(s.m, "x", s.n, "x", s.k));
  j["coopmat_nv_f16_f32_shapes"] = shapes;

  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mem{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (c.memory_budget) mem.pNext = &budget;
  vk_.vkGetPhysicalDeviceMemoryProperties2(physical_, &mem);
  Json heaps = Json::array();
  for (uint32_t h = 0; h < mem.memoryProperties.memoryHeapCount; ++h) {
    Json heap = {{"bytes", mem.memoryProperties.memoryHeaps[h].size},
                 {"device_local", (mem.memoryProperties.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0}};
    if (c.memory_budget) {
      heap["budget_bytes"] = budget.heapBudget[h];
      heap["usage_bytes"] = budget.heapUsage[h];
    }
    heaps.push_back(heap);
  }
  j["memory_heaps"] = heaps;
  j["memory_budget"] = c.memory_budget ? "VK_EXT_memory_budget" : "not offered";
  return j;
}

}  // namespace attnbench::vulkan
