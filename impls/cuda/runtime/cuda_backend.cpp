#include "cuda_backend.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "attnbench/error.h"
#include "cuda_check.h"
#include "device_kernels.h"
#include "nvml.h"

#ifndef ATTNBENCH_CUDA_ARCHS
#define ATTNBENCH_CUDA_ARCHS "unknown"
#endif

namespace attnbench::cuda {

namespace {

// cudaMalloc hands out memory in pages of up to 2 MiB; counting each tracked buffer at that
// granularity makes untracked_bytes a lower bound, so only real untracked allocations are flagged.
constexpr size_t kAllocGranule = size_t{2} << 20;
constexpr size_t kUntrackedFlagBytes = size_t{16} << 20;
// A forgotten release_stream() must not hang the device for ever.
constexpr uint64_t kHoldTimeoutNs = 10'000'000'000ull;

size_t granules(size_t bytes) { return (bytes + kAllocGranule - 1) / kAllocGranule * kAllocGranule; }

std::string version_string(int v) { return cat(v / 1000, ".", (v % 1000) / 10); }

}  // namespace

// --- allocator ---------------------------------------------------------------------------------

class CudaBackend::TrackedAllocator final : public Allocator {
 public:
  explicit TrackedAllocator(CudaBackend& be) : be_(be) {}
  size_t max_allocation() const override { return be_.props_.totalGlobalMem; }
  size_t held_bytes() const {
    std::lock_guard lock(mu_);
    return held_;
  }

 protected:
  Raw raw_allocate(size_t total) override {
    check_not_lost();
    void* p = nullptr;
    ATTNBENCH_CUDA_CHECK(cudaMalloc(&p, total));
    std::lock_guard lock(mu_);
    sizes_[p] = total;
    held_ += granules(total);
    return {p, nullptr};
  }
  void raw_free(const Raw& raw) noexcept override {
    (void)cudaFree(raw.native);  // after a sticky error this fails; the memory goes with the context
    std::lock_guard lock(mu_);
    if (auto it = sizes_.find(raw.native); it != sizes_.end()) {
      held_ -= granules(it->second);
      sizes_.erase(it);
    }
  }
  void raw_write(const Raw& raw, size_t offset, const void* src, size_t n) override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(raw.native) + offset, src, n, cudaMemcpyHostToDevice, be_.stream_));
    ATTNBENCH_CUDA_CHECK(cudaStreamSynchronize(be_.stream_));
  }
  void raw_read(const Raw& raw, size_t offset, void* dst, size_t n) override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, static_cast<const char*>(raw.native) + offset, n, cudaMemcpyDeviceToHost, be_.stream_));
    ATTNBENCH_CUDA_CHECK(cudaStreamSynchronize(be_.stream_));
  }

 private:
  CudaBackend& be_;
  mutable std::mutex mu_;
  std::unordered_map<void*, size_t> sizes_;
  size_t held_ = 0;
};

// --- timer -------------------------------------------------------------------------------------

class CudaBackend::EventTimer final : public DeviceTimer {
 public:
  explicit EventTimer(cudaStream_t stream) : stream_(stream) {
    ATTNBENCH_CUDA_CHECK(cudaEventCreate(&start_));
    ATTNBENCH_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() override {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  void start() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(cudaEventRecord(start_, stream_));
  }
  void stop() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  }
  double seconds() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    ATTNBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return 1e-3 * ms;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// --- backend -----------------------------------------------------------------------------------

CudaBackend::CudaBackend() = default;

CudaBackend::~CudaBackend() {
  // Nothing here may throw; after a sticky error every call fails harmlessly.
  if (holding_) hold_flags_[0] = hold_generation_;
  timer_.reset();
  allocator_.reset();
  nvml_.reset();
  if (flush_buffer_) (void)cudaFree(flush_buffer_);
  if (hold_flags_) (void)cudaFreeHost(const_cast<uint32_t*>(hold_flags_));
  if (stream_) (void)cudaStreamDestroy(stream_);
}

std::vector<BackendOption> CudaBackend::options() const {
  return {{"device", "0", "CUDA device index (as cudaSetDevice counts them, after CUDA_VISIBLE_DEVICES)"}};
}

Probe CudaBackend::probe() {
  if (probe_) return *probe_;
  Probe p;
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    (void)cudaGetLastError();
    p.reason = cat("no usable CUDA device: cudaGetDeviceCount returned ", cudaGetErrorName(e), " (",
                   cudaGetErrorString(e), ")");
    probe_ = p;
    return p;
  }
  const std::string dev = option("device");
  char* end = nullptr;
  const long index = std::strtol(dev.c_str(), &end, 10);
  if (dev.empty() || *end || index < 0) throw InputError(cat("cuda: device=", dev, " is not a device index"));
  if (count == 0 || index >= count) {
    p.reason = count == 0 ? std::string("no CUDA device") : cat("cuda.device=", index, ", but this machine has ", count, " CUDA device(s)");
    probe_ = p;
    return p;
  }
  device_ = static_cast<int>(index);
  try {
    open();
  } catch (const BackendError& e) {
    p.reason = e.what();
    probe_ = p;
    return p;
  }
  if (props_.major < 9) {
    p.reason = cat(props_.name, " has compute capability ", props_.major, ".", props_.minor,
                   "; attnbench's CUDA kernels are built for ", ATTNBENCH_CUDA_ARCHS, " (9.0 or newer)");
    probe_ = p;
    return p;
  }
  cudaFuncAttributes attr{};
  if (const cudaError_t e = cudaFuncGetAttributes(&attr, any_kernel()); e != cudaSuccess) {
    (void)cudaGetLastError();
    p.reason = cat("this build has no code for ", props_.name, " (compute capability ", props_.major, ".", props_.minor,
                   "; built for ", ATTNBENCH_CUDA_ARCHS, "): ", cudaGetErrorName(e));
    probe_ = p;
    return p;
  }

  p.available = true;
  p.device.name = props_.name;
  Json& d = p.device.details;
  d["name"] = props_.name;
  d["compute_capability"] = cat(props_.major, ".", props_.minor);
  d["sm_count"] = props_.multiProcessorCount;
  d["l2_bytes"] = props_.l2CacheSize;
  d["memory_bytes"] = props_.totalGlobalMem;
  d["memory_bus_width_bits"] = props_.memoryBusWidth;
  d["shared_mem_per_block_optin"] = props_.sharedMemPerBlockOptin;
  d["shared_mem_per_sm"] = props_.sharedMemPerMultiprocessor;
  d["registers_per_sm"] = props_.regsPerMultiprocessor;
  d["ecc"] = props_.ECCEnabled != 0;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device_) == cudaSuccess) d["sm_clock_max_mhz"] = khz / 1000;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device_) == cudaSuccess) d["mem_clock_max_mhz"] = khz / 1000;
  (void)cudaGetLastError();
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) d["driver_api_version"] = version_string(v);
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) d["runtime_version"] = version_string(v);
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device_) == cudaSuccess) d["pci_bus_id"] = bus;
  if (nvml_->ok()) {
    d["driver_version"] = nvml_->driver_version();
    if (auto mhz = nvml_->max_clock_mhz(false)) d["nvml_sm_clock_max_mhz"] = *mhz;
  } else {
    d["nvml"] = nvml_->why_not();
  }
  d["built_for"] = ATTNBENCH_CUDA_ARCHS;
  d["kernel_registers"] = attr.numRegs;  // of the copy kernel; a sanity figure for the build

  p.limits.max_buffer_bytes = props_.totalGlobalMem;
  p.limits.memory_bytes = props_.totalGlobalMem;
  p.limits.shared_mem_bytes = props_.sharedMemPerBlockOptin;
  p.limits.subgroup_size = 32;
  p.limits.compute_units = static_cast<uint32_t>(props_.multiProcessorCount);
  p.limits.compute_capability = {props_.major, props_.minor};
  if (props_.major == 9 && props_.minor == 0) p.limits.features["sm_90a"] = true;
  try {
    baseline_used_ = used_device_bytes();  // the context's own memory: not any impl's
  } catch (const BackendError& e) {
    p = Probe{};
    p.reason = e.what();
  }
  probe_ = p;
  return p;
}

void CudaBackend::open() {
  ATTNBENCH_CUDA_CHECK(cudaSetDevice(device_));
  ATTNBENCH_CUDA_CHECK(cudaGetDeviceProperties(&props_, device_));
  // Non-blocking: no implicit ordering against the legacy default stream; every copy of this
  // backend goes through stream_ anyway.
  ATTNBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  allocator_ = std::make_unique<TrackedAllocator>(*this);
  timer_ = std::make_unique<EventTimer>(stream_);
  void* flags = nullptr;
  ATTNBENCH_CUDA_CHECK(cudaHostAlloc(&flags, 64, cudaHostAllocMapped));
  hold_flags_ = static_cast<volatile uint32_t*>(flags);
  hold_flags_[0] = 0;
  hold_flags_[1] = 0;
  char bus[32] = {};
  ATTNBENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device_));
  nvml_ = std::make_unique<Nvml>(bus);
}

void CudaBackend::require_open() {
  ATTNBENCH_ASSERT(probe_ && probe_->available, "the cuda backend is used without an available device");
}

Allocator& CudaBackend::allocator() {
  require_open();
  return *allocator_;
}

DeviceTimer& CudaBackend::timer() {
  require_open();
  return *timer_;
}

void CudaBackend::upload(const HostTensor& src, Buffer& dst) {
  ATTNBENCH_ASSERT(src.bytes() == dst.bytes(), "upload size mismatch for ", dst.name());
  check_not_lost();
  if (!src.bytes()) return;
  ATTNBENCH_CUDA_CHECK(cudaMemcpyAsync(dst.ptr(), src.raw(), src.bytes(), cudaMemcpyHostToDevice, stream_));
  ATTNBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::download(const Buffer& src, HostTensor& dst) {
  ATTNBENCH_ASSERT(src.bytes() == dst.bytes(), "download size mismatch for ", src.name());
  check_not_lost();
  if (!dst.bytes()) return;
  ATTNBENCH_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), src.ptr(), dst.bytes(), cudaMemcpyDeviceToHost, stream_));
  ATTNBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::synchronize() {
  require_open();
  check_not_lost();
  ATTNBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

size_t CudaBackend::used_device_bytes() const {
  size_t free_bytes = 0, total = 0;
  ATTNBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return total - free_bytes;
}

size_t CudaBackend::cache_bytes() const {
  return probe_ && probe_->available ? static_cast<size_t>(props_.l2CacheSize) : 0;
}

bool CudaBackend::flush_cache() {
  require_open();
  check_not_lost();
  if (!flush_buffer_) {
    // Twice the L2, so no line of the case survives whatever the L2's hashing and partitions do.
    const size_t before = used_device_bytes();
    flush_bytes_ = 2 * static_cast<size_t>(props_.l2CacheSize);
    ATTNBENCH_CUDA_CHECK(cudaMalloc(&flush_buffer_, flush_bytes_));
    baseline_used_ += used_device_bytes() - before;  // the backend's own, not an impl's
  }
  ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(flush_buffer_, ++flush_fill_, flush_bytes_, stream_));
  return true;
}

bool CudaBackend::hold_stream() {
  require_open();
  check_not_lost();
  if (holding_) return true;
  uint32_t* device_flags = nullptr;
  ATTNBENCH_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), const_cast<uint32_t*>(hold_flags_), 0));
  ++hold_generation_;
  ATTNBENCH_CUDA_CHECK(launch_hold(device_flags, hold_generation_, device_flags + 1, kHoldTimeoutNs, stream_));
  holding_ = true;
  return true;
}

void CudaBackend::release_stream() {
  if (!holding_) return;
  holding_ = false;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  hold_flags_[0] = hold_generation_;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (hold_flags_[1] == hold_generation_)
    throw BackendError(cat("cuda: the stream hold timed out after ", kHoldTimeoutNs / 1'000'000'000ull,
                           " s before release_stream(); the held launches were not timed behind it"));
}

Json CudaBackend::telemetry() {
  if (!probe_ || !probe_->available) return Json();
  Json t = Json::object();
  if (const std::string lost = lost_reason(); !lost.empty()) {
    t["device_lost"] = lost;
    return t;
  }
  if (nvml_ && nvml_->ok()) {
    const NvmlSample s = nvml_->sample();
    if (s.sm_clock_mhz) t["sm_clock_mhz"] = *s.sm_clock_mhz;
    if (s.mem_clock_mhz) t["mem_clock_mhz"] = *s.mem_clock_mhz;
    if (s.throttle_mask) {
      t["throttle_mask"] = *s.throttle_mask;
      t["throttle_reasons"] = s.throttle_reasons;
    }
    if (s.temperature_c) t["temperature_c"] = *s.temperature_c;
    if (s.power_mw) t["power_w"] = *s.power_mw / 1000.0;
  }
  const size_t used = used_device_bytes(), tracked = allocator_->held_bytes();
  const size_t own = baseline_used_ + tracked;
  const size_t untracked = used > own ? used - own : 0;
  t["device_memory"] = {{"used_bytes", used},
                        {"baseline_bytes", baseline_used_},
                        {"tracked_bytes", tracked},
                        {"untracked_bytes", untracked}};
  t["untracked_allocation"] = untracked > kUntrackedFlagBytes;
  return t;
}

namespace {
// Scratch device memory and events of the peaks probe, released however the probe ends.
struct Scratch {
  std::vector<void*> buffers;
  std::vector<cudaEvent_t> events;
  void* alloc(size_t bytes) {
    void* p = nullptr;
    ATTNBENCH_CUDA_CHECK(cudaMalloc(&p, bytes));
    buffers.push_back(p);
    return p;
  }
  cudaEvent_t event() {
    cudaEvent_t e = nullptr;
    ATTNBENCH_CUDA_CHECK(cudaEventCreate(&e));
    events.push_back(e);
    return e;
  }
  ~Scratch() {
    for (void* p : buffers) (void)cudaFree(p);
    for (cudaEvent_t e : events) (void)cudaEventDestroy(e);
  }
};
}  // namespace

Peaks CudaBackend::measure_peaks() {
  require_open();
  check_not_lost();
  const int sms = props_.multiProcessorCount;
  Scratch scratch;
  const cudaEvent_t start = scratch.event(), stop = scratch.event();
  // Times `launch` `reps` times after one warm-up; the shortest run.
  const auto best_seconds = [&](int reps, const auto& launch) {
    launch();
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      ATTNBENCH_CUDA_CHECK(cudaEventRecord(start, stream_));
      launch();
      ATTNBENCH_CUDA_CHECK(cudaEventRecord(stop, stream_));
      ATTNBENCH_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      ATTNBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      best = std::min(best, 1e-3 * ms);
    }
    return best;
  };

  // Copy: two arrays of up to 1 GiB each (far beyond the L2), bytes read + written.
  size_t free_bytes = 0, total = 0;
  ATTNBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const size_t copy_bytes = std::min<size_t>(size_t{1} << 30, free_bytes / 4) & ~((size_t{1} << 20) - 1);
  void* src = scratch.alloc(copy_bytes);
  void* dst = scratch.alloc(copy_bytes);
  auto* sink = static_cast<float*>(scratch.alloc(sizeof(float)));
  ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(src, 1, copy_bytes, stream_));
  Peaks peaks;
  const double copy_s = best_seconds(10, [&] { ATTNBENCH_CUDA_CHECK(launch_copy(src, dst, copy_bytes, sms * 8, stream_)); });
  peaks.copy_bytes_per_s = 2.0 * static_cast<double>(copy_bytes) / copy_s;

  double mma_flops = 0, fma_flops = 0;
  const double mma_s = best_seconds(5, [&] { ATTNBENCH_CUDA_CHECK(launch_mma_rate(sink, sms * 4, 4096, stream_, &mma_flops)); });
  const double fma_s = best_seconds(5, [&] { ATTNBENCH_CUDA_CHECK(launch_fma_rate(sink, sms * 8, 4096, stream_, &fma_flops)); });
  peaks.flops_per_s = mma_flops / mma_s;
  peaks.how = cat("copy: 16-byte loads and stores over 2×", copy_bytes >> 20,
                  " MiB on the device, bytes read + written, best of 10; flops: mma.sync m16n8k16 bf16 with f32 "
                  "accumulation on all ", sms, " SMs (the tensor-core path of the attention kernels), best of 5; "
                  "fp32 FFMA for comparison: ", fma_flops / fma_s / 1e12, " TFLOP/s");
  return peaks;
}

CudaBackend& as_cuda(Backend& b) {
  auto* cuda = dynamic_cast<CudaBackend*>(&b);
  ATTNBENCH_ASSERT(cuda, "a cuda impl was prepared on backend ", b.name());
  return *cuda;
}

}  // namespace attnbench::cuda

ATTNBENCH_BACKEND(attnbench::cuda::CudaBackend, "cuda");
