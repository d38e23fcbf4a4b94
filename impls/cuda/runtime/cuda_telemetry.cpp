#include "cuda_telemetry.h"

#include "cuda_allocator.h"
#include "nvml.h"

namespace attnbench::cuda {

namespace {
constexpr size_t kUntrackedFlagBytes = size_t{16} << 20;
}  // namespace

Json device_telemetry(const Nvml* nvml, size_t baseline, const CudaAllocator& allocator) {
  Json t = Json::object();
  if (nvml && nvml->ok()) {
    const NvmlSample s = nvml->sample();
    if (s.sm_clock_mhz) t["sm_clock_mhz"] = *s.sm_clock_mhz;
    if (s.mem_clock_mhz) t["mem_clock_mhz"] = *s.mem_clock_mhz;
    if (s.throttle_mask) {
      t["throttle_mask"] = *s.throttle_mask;
      t["throttle_reasons"] = s.throttle_reasons;
    }
    if (s.temperature_c) t["temperature_c"] = *s.temperature_c;
    if (s.power_mw) t["power_w"] = *s.power_mw / 1000.0;
  }
  const size_t used = used_device_bytes(), tracked = allocator.held_bytes();
  const size_t own = baseline + tracked;
  const size_t untracked = used > own ? used - own : 0;
  t["device_memory"] = {{"used_bytes", used},
                        {"baseline_bytes", baseline},
                        {"tracked_bytes", tracked},
                        {"untracked_bytes", untracked}};
  t["untracked_allocation"] = untracked > kUntrackedFlagBytes;
  return t;
}

}  // namespace attnbench::cuda
