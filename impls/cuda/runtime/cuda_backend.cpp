#include "cuda_backend.h"

#include <cstdlib>

#include "attnbench/error.h"
#include "cold_timing.h"
#include "cuda_allocator.h"
#include "cuda_check.h"
#include "cuda_peaks.h"
#include "cuda_stream.h"
#include "cuda_telemetry.h"
#include "device_kernels.h"
#include "nvml.h"

#ifndef ATTNBENCH_CUDA_ARCHS
#define ATTNBENCH_CUDA_ARCHS "unknown"
#endif

namespace attnbench::cuda {

namespace {

std::string version_string(int v) { return cat(v / 1000, ".", (v % 1000) / 10); }

}  // namespace

CudaBackend::CudaBackend() = default;

CudaBackend::~CudaBackend() {
  // Nothing here may throw; after a sticky error every call fails harmlessly.
  if (hold_) hold_->let_go();
  timer_.reset();
  allocator_.reset();
  nvml_.reset();
  flush_.reset();
  hold_.reset();
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
  allocator_ = std::make_unique<CudaAllocator>(props_.totalGlobalMem, stream_);
  timer_ = std::make_unique<EventTimer>(stream_);
  flush_ = std::make_unique<L2Flush>(static_cast<size_t>(props_.l2CacheSize));
  hold_ = std::make_unique<StreamHold>();
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
  copy_and_wait(dst.ptr(), src.raw(), src.bytes(), cudaMemcpyHostToDevice, stream_);
}

void CudaBackend::download(const Buffer& src, HostTensor& dst) {
  ATTNBENCH_ASSERT(src.bytes() == dst.bytes(), "download size mismatch for ", src.name());
  check_not_lost();
  if (!dst.bytes()) return;
  copy_and_wait(dst.raw(), src.ptr(), dst.bytes(), cudaMemcpyDeviceToHost, stream_);
}

void CudaBackend::synchronize() {
  require_open();
  check_not_lost();
  ATTNBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

size_t CudaBackend::cache_bytes() const {
  return probe_ && probe_->available ? static_cast<size_t>(props_.l2CacheSize) : 0;
}

bool CudaBackend::flush_cache() {
  require_open();
  check_not_lost();
  baseline_used_ += flush_->prepare();  // the flush buffer is the backend's own, not an impl's
  flush_->enqueue(stream_);
  return true;
}

bool CudaBackend::hold_stream() {
  require_open();
  check_not_lost();
  hold_->hold(stream_);
  return true;
}

void CudaBackend::release_stream() {
  if (hold_) hold_->release();
}

Json CudaBackend::telemetry() {
  if (!probe_ || !probe_->available) return Json();
  if (const std::string lost = lost_reason(); !lost.empty()) {
    Json t = Json::object();
    t["device_lost"] = lost;
    return t;
  }
  return device_telemetry(nvml_.get(), baseline_used_, *allocator_);
}

Peaks CudaBackend::measure_peaks() {
  require_open();
  check_not_lost();
  return measure_cuda_peaks(stream_, props_.multiProcessorCount);
}

CudaBackend& as_cuda(Backend& b) {
  auto* cuda = dynamic_cast<CudaBackend*>(&b);
  ATTNBENCH_ASSERT(cuda, "a cuda impl was prepared on backend ", b.name());
  return *cuda;
}

}  // namespace attnbench::cuda

ATTNBENCH_BACKEND(attnbench::cuda::CudaBackend, "cuda");
