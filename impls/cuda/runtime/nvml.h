// NVML through dlopen of libnvidia-ml.so.1 (installed with the driver), so the binary neither
// links nor needs NVML: where the library or a symbol is missing, the readings are simply absent.
// Used for the per-sample clocks and throttle reasons of docs/design.md "Timing" and the driver version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnbench::cuda {

struct NvmlSample {
  std::optional<unsigned> sm_clock_mhz, mem_clock_mhz, temperature_c, power_mw;
  std::optional<uint64_t> throttle_mask;      // NVML's clocks-event (throttle) reason bits
  std::vector<std::string> throttle_reasons;  // their names, "gpu_idle" and "sw_power_cap" ...
};

class Nvml {
 public:
  // Opens NVML and the device with this PCI bus id ("0000:3b:00.0"); never throws.
  explicit Nvml(const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ok() const { return device_ != nullptr; }
  const std::string& why_not() const { return why_not_; }  // when !ok()
  NvmlSample sample() const;
  std::string driver_version() const;                  // "580.159.03", or ""
  std::optional<unsigned> max_clock_mhz(bool memory) const;

 private:
  struct Api;
  void* lib_ = nullptr;
  Api* api_ = nullptr;
  void* device_ = nullptr;
  std::string why_not_;
};

}  // namespace attnbench::cuda
