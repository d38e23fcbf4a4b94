#include "nvml.h"

#include <dlfcn.h>

namespace attnbench::cuda {

namespace {
// The few NVML entry points used, declared by hand (the toolkit here ships no nvml.h). All return
// nvmlReturn_t, 0 on success; the device handle is an opaque pointer.
using NvmlDevice = void*;
constexpr int kNvmlSuccess = 0;
constexpr int kClockSm = 1, kClockMem = 2;  // nvmlClockType_t
constexpr int kTemperatureGpu = 0;          // nvmlTemperatureSensors_t

// nvmlClocksEventReasons / nvmlClocksThrottleReasons bits.
constexpr std::pair<uint64_t, const char*> kReasons[] = {
    {0x1, "gpu_idle"},          {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},       {0x10, "sync_boost"},                 {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"}, {0x100, "display_clock_setting"},
};
}  // namespace

struct Nvml::Api {
  int (*init)();
  int (*shutdown)();
  int (*by_pci)(const char*, NvmlDevice*);
  int (*clock)(NvmlDevice, int, unsigned*);
  int (*max_clock)(NvmlDevice, int, unsigned*);
  int (*reasons)(NvmlDevice, unsigned long long*);
  int (*temperature)(NvmlDevice, int, unsigned*);
  int (*power)(NvmlDevice, unsigned*);
  int (*driver)(char*, unsigned);
};

Nvml::Nvml(const std::string& pci_bus_id) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    why_not_ = "libnvidia-ml.so.1 not found";
    return;
  }
  auto sym = [&](const char* name) { return dlsym(lib_, name); };
  api_ = new Api{};
  api_->init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
  api_->shutdown = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
  api_->by_pci = reinterpret_cast<int (*)(const char*, NvmlDevice*)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  api_->clock = reinterpret_cast<int (*)(NvmlDevice, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
  api_->max_clock = reinterpret_cast<int (*)(NvmlDevice, int, unsigned*)>(sym("nvmlDeviceGetMaxClockInfo"));
  // Renamed in newer drivers; the old name is kept as an alias.
  void* reasons = sym("nvmlDeviceGetCurrentClocksEventReasons");
  if (!reasons) reasons = sym("nvmlDeviceGetCurrentClocksThrottleReasons");
  api_->reasons = reinterpret_cast<int (*)(NvmlDevice, unsigned long long*)>(reasons);
  api_->temperature = reinterpret_cast<int (*)(NvmlDevice, int, unsigned*)>(sym("nvmlDeviceGetTemperature"));
  api_->power = reinterpret_cast<int (*)(NvmlDevice, unsigned*)>(sym("nvmlDeviceGetPowerUsage"));
  api_->driver = reinterpret_cast<int (*)(char*, unsigned)>(sym("nvmlSystemGetDriverVersion"));
  if (!api_->init || !api_->shutdown || !api_->by_pci) {
    why_not_ = "libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2";
    return;
  }
  if (api_->init() != kNvmlSuccess) {
    why_not_ = "nvmlInit_v2 failed";
    api_->init = nullptr;  // nothing to shut down
    return;
  }
  NvmlDevice dev = nullptr;
  if (api_->by_pci(pci_bus_id.c_str(), &dev) != kNvmlSuccess || !dev) {
    why_not_ = "NVML does not know the device at PCI bus id " + pci_bus_id;
    return;
  }
  device_ = dev;
}

Nvml::~Nvml() {
  if (api_ && api_->init && api_->shutdown) api_->shutdown();
  delete api_;
  if (lib_) dlclose(lib_);
}

NvmlSample Nvml::sample() const {
  NvmlSample s;
  if (!ok()) return s;
  unsigned v = 0;
  if (api_->clock && api_->clock(device_, kClockSm, &v) == kNvmlSuccess) s.sm_clock_mhz = v;
  if (api_->clock && api_->clock(device_, kClockMem, &v) == kNvmlSuccess) s.mem_clock_mhz = v;
  if (api_->temperature && api_->temperature(device_, kTemperatureGpu, &v) == kNvmlSuccess) s.temperature_c = v;
  if (api_->power && api_->power(device_, &v) == kNvmlSuccess) s.power_mw = v;
  unsigned long long mask = 0;
  if (api_->reasons && api_->reasons(device_, &mask) == kNvmlSuccess) {
    s.throttle_mask = mask;
    for (const auto& [bit, name] : kReasons)
      if (mask & bit) s.throttle_reasons.emplace_back(name);
  }
  return s;
}

std::string Nvml::driver_version() const {
  char buf[96] = {};
  if (ok() && api_->driver && api_->driver(buf, sizeof buf) == kNvmlSuccess) return buf;
  return {};
}

std::optional<unsigned> Nvml::max_clock_mhz(bool memory) const {
  unsigned v = 0;
  if (ok() && api_->max_clock && api_->max_clock(device_, memory ? kClockMem : kClockSm, &v) == kNvmlSuccess) return v;
  return std::nullopt;
}

}  // namespace attnbench::cuda
