// The backend contract (docs/design.md "Contracts"): what every backend provides. The harness
// core names none of them; backends register themselves with ATTNBENCH_BACKEND.
//
// A backend owns one device and one stream of work: a tracked allocator (guard regions, current
// and peak bytes), upload/download in the canonical layout, a device timer, synchronize, and a
// peaks probe measured in the same run as the roofline denominator. Limits are plain data that
// each impl's supports() reads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attnbench/allocator.h"
#include "attnbench/method.h"
#include "attnbench/json.h"
#include "attnbench/tensor.h"

namespace attnbench {

// What kind of device a backend drives (Vulkan's physical device types).
enum class DeviceType { unknown, discrete, integrated, virtual_gpu, cpu, other };
const char* device_type_name(DeviceType t);  // "" (unknown), "discrete", "integrated", "virtual", "cpu", "other"
DeviceType parse_device_type(std::string_view name);  // InputError for anything else

// The instruction set a CPU backend's kernels use.
enum class CpuIsa { none, avx2, avx512 };
const char* cpu_isa_name(CpuIsa isa);  // "" (none), "avx2", "avx512"
CpuIsa parse_cpu_isa(std::string_view name);  // InputError for anything else

// An M x N x K matrix-multiply shape a device multiplies in one operation (a cooperative matrix).
struct MatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  bool operator==(const MatrixShape&) const = default;
};
std::string matrix_shapes_text(const std::vector<MatrixShape>& shapes);  // "16x8x16,16x16x16"

// A CUDA device's compute capability (9.0 for Hopper); 0.0 when not a CUDA device.
struct ComputeCapability {
  int major = 0, minor = 0;
  bool operator==(const ComputeCapability&) const = default;
};

// Plain data each impl's supports() reads. A member a backend does not fill keeps its default,
// which means "not applicable".
struct DeviceLimits {
  uint64_t max_buffer_bytes = 0;   // largest single allocation
  uint64_t max_binding_bytes = 0;  // largest range one shader binding may address (0: no limit)
  uint64_t shared_mem_bytes = 0;   // per workgroup / block (0: not applicable)
  uint32_t subgroup_size = 0;      // 0: not applicable
  uint32_t compute_units = 0;      // threads, SMs, ...
  uint64_t memory_bytes = 0;       // device memory
  // The range of subgroup sizes the device may choose (0: only subgroup_size).
  uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  uint32_t max_workgroup_size = 0;  // invocations in one workgroup (0: unknown)
  DeviceType device_type = DeviceType::unknown;
  std::vector<MatrixShape> coopmat_f16_shapes;  // f16 cooperative-matrix shapes (Vulkan NV)
  ComputeCapability compute_capability;
  CpuIsa isa = CpuIsa::none;
  // A backend option every split kernel must follow (vulkan.splits): the number of key splits,
  // 0 letting each plan choose. It travels here because plans see only the limits.
  uint32_t forced_splits = 0;
  // Loop iterations one shader invocation may run, all its loops together, before the driver ends
  // them silently (0: no such limit). Mesa's llvmpipe counts every loop iteration against 65535;
  // plans whose loops grow with a case's size keep each invocation under it.
  uint32_t max_loop_iterations = 0;
  std::map<std::string, bool> features;  // capability flags: "avx512f", "coopmat_nv", "storage16", ...
  bool has(const std::string& feature) const;
};

struct DeviceInfo {
  std::string name;                              // "Intel Xeon ... (2 threads)", "NVIDIA H200"
  Json details = Json::object();                 // driver, versions, clocks, ...
};

struct Probe {
  bool available = false;
  std::string reason;   // why not, when unavailable
  DeviceInfo device;
  DeviceLimits limits;
};

// The ceilings a backend measured in this run (docs/design.md "Ceilings"), one per way a kernel
// can be bound: bandwidths named *_bytes_per_s (read: bytes read; write: bytes written; copy:
// bytes read + written by a copy) and arithmetic rates named *_flops_per_s, one per compute
// path the backend offers (fp32 FMA, a 16-bit dot-product unit, a tensor-core mma). A row is
// judged against the one its work names (Work::bound, Impl::compute_ceiling).
struct Ceiling {
  std::string name;  // e.g. "read_bytes_per_s", "fp32_flops_per_s", "amx_bf16_flops_per_s"
  double per_s = 0;
  std::string how;   // one line: what was measured, how often, best of how many
};

namespace ceilings {
inline constexpr const char* read = "read_bytes_per_s";
inline constexpr const char* write = "write_bytes_per_s";
inline constexpr const char* copy = "copy_bytes_per_s";
inline constexpr const char* fp32 = "fp32_flops_per_s";
// The ceiling a row of this bound is judged against; a compute-bound row names its own path
// (Impl::compute_ceiling), fp32 when it names none.
const char* for_bound(Bound b);
bool is_bandwidth(const std::string& name);          // ends in _bytes_per_s
std::string short_name(const std::string& name);     // "read", "copy", "fp32", "amx_bf16"
}  // namespace ceilings

struct Peaks {
  std::vector<Ceiling> ceilings;  // in the order measured; names unique
  std::string how;                // one line for the whole probe (threads, where it ran)

  void add(std::string name, double per_s, std::string how);
  const Ceiling* find(const std::string& name) const;
  double rate(const std::string& name) const;  // 0 when not measured
};

struct BackendOption {
  std::string name;           // without the backend prefix: "threads"
  std::string default_value;  // "" when chosen at run time
  std::string doc;
};

class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  virtual void start() = 0;        // enqueue a start mark
  virtual void stop() = 0;         // enqueue a stop mark
  virtual double seconds() = 0;    // waits for the stop mark; elapsed device time
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;  // "cpu" | "cuda" | "vulkan"
  // Options this backend reads: --backend-opt <name>.<option>=v or ATTNBENCH_<NAME>_<OPTION>.
  virtual std::vector<BackendOption> options() const { return {}; }
  // Opens the device on first call and caches the answer. Never throws for a missing device.
  virtual Probe probe() = 0;
  virtual Allocator& allocator() = 0;
  virtual void upload(const HostTensor& src, Buffer& dst) = 0;
  virtual void download(const Buffer& src, HostTensor& dst) = 0;
  virtual DeviceTimer& timer() = 0;
  virtual void synchronize() = 0;
  virtual Peaks measure_peaks() = 0;

  // --- optional hooks (defaults given) -----------------------------------------------------------
  // Size of the last-level cache that cold timing must defeat (L2 on a GPU, L3 on a CPU); 0 unknown.
  virtual size_t cache_bytes() const { return 0; }
  // Evicts that cache before a cold sample (nvbench's L2 flush), enqueued like a kernel; false when
  // the backend cannot, and the harness falls back to rotating input copies.
  virtual bool flush_cache() { return false; }
  // Holds the stream (a blocking kernel) while launches are enqueued, so launch latency stays out of
  // a timed single launch; false when the backend has no such thing (release_stream is then a no-op).
  virtual bool hold_stream() { return false; }
  virtual void release_stream() {}
  // Per-sample device state worth recording beside a timing: clocks, throttle reasons. Null if none.
  virtual Json telemetry() { return Json(); }

  // Backend options, set by the CLI before probe(); the environment fills the rest.
  void set_option(const std::string& key, const std::string& value);  // InputError if unknown
  // The option's value: --backend-opt, else ATTNBENCH_<NAME>_<KEY>, else its default.
  std::string option(const std::string& key) const;

 private:
  std::map<std::string, std::string> options_set_;
};

using BackendFactory = std::unique_ptr<Backend> (*)();
void register_backend(const std::string& name, BackendFactory make, const char* source_file);

namespace detail {
struct BackendRegistrar {
  BackendRegistrar(const char* name, BackendFactory make, const char* file) { register_backend(name, make, file); }
};
}  // namespace detail

}  // namespace attnbench

#define ATTNBENCH_BACKEND_CONCAT_INNER(a, b) a##b
#define ATTNBENCH_BACKEND_CONCAT(a, b) ATTNBENCH_BACKEND_CONCAT_INNER(a, b)
#define ATTNBENCH_BACKEND(Class, name)                                                            \
  static ::attnbench::detail::BackendRegistrar ATTNBENCH_BACKEND_CONCAT(attnbench_backend_registrar_, __LINE__)( \
      name, []() -> std::unique_ptr<::attnbench::Backend> { return std::make_unique<Class>(); }, \
      __FILE__)
