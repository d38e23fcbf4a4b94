// The CUDA runtime calls the backend makes (impls/cuda/runtime), answered on the host for the
// emulated device (device.h): one device, an H200's properties, device memory from the heap,
// copies done at once (every launch has finished when it returns, so a stream is always idle),
// events read the host clock. The runtime's own kernels (impls/cuda/runtime/device_kernels.h:
// the peaks probe, the L2 flush, the stream hold) are done by host loops or not at all.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "cuda_emulation/device.h"
#include "impls/cuda/runtime/device_kernels.h"

namespace {

constexpr size_t kDeviceMemory = size_t{16} << 30;  // what the emulated device reports, not reserves
std::mutex g_mu;
std::map<const void*, size_t> g_allocations;
size_t g_used = 0;
cudaError_t g_last = cudaSuccess;
struct Event {
  double seconds = 0;
};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

cudaError_t set_last(cudaError_t e) {
  if (e != cudaSuccess) g_last = e;
  return e;
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) { return set_last(device == 0 ? cudaSuccess : cudaErrorInvalidDevice); }

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (device != 0) return set_last(cudaErrorInvalidDevice);
  *p = cudaDeviceProp{};
  std::strncpy(p->name, "emulated H200 (the host CPU)", sizeof p->name - 1);
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 132;
  p->totalGlobalMem = kDeviceMemory;
  p->sharedMemPerBlock = 48 * 1024;
  p->sharedMemPerBlockOptin = 227 * 1024;
  p->sharedMemPerMultiprocessor = 228 * 1024;
  p->regsPerMultiprocessor = 65536;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->l2CacheSize = 50 * 1024 * 1024;
  p->memoryBusWidth = 6144;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  switch (attr) {
    case cudaDevAttrClockRate: *value = 1980000; return cudaSuccess;
    case cudaDevAttrMemoryClockRate: *value = 3201000; return cudaSuccess;
    default: return set_last(cudaErrorInvalidValue);
  }
}
cudaError_t cudaDeviceGetPCIBusId(char* bus, int len, int) {
  std::strncpy(bus, "emulated", static_cast<size_t>(len));
  if (len > 0) bus[len - 1] = '\0';
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v) {
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = 13000;
  return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void*) {
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = 1024;
  return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void*, cudaFuncAttribute, int) { return cudaSuccess; }

cudaError_t cudaGetLastError(void) {
  const cudaError_t e = g_last;
  g_last = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return g_last; }

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    default: return "cudaErrorUnknown";
  }
}
const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorLaunchFailure: return "unspecified launch failure (the emulation printed why)";
    default: return "unknown error";
  }
}

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  std::lock_guard lock(g_mu);
  if (g_used + bytes > kDeviceMemory) return set_last(cudaErrorMemoryAllocation);
  *ptr = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);  // cudaMalloc's 256-byte alignment
  if (!*ptr) return set_last(cudaErrorMemoryAllocation);
  g_allocations[*ptr] = bytes;
  g_used += bytes;
  return cudaSuccess;
}
cudaError_t cudaFree(void* ptr) {
  if (!ptr) return cudaSuccess;
  std::lock_guard lock(g_mu);
  const auto it = g_allocations.find(ptr);
  if (it == g_allocations.end()) return set_last(cudaErrorInvalidValue);
  g_used -= it->second;
  g_allocations.erase(it);
  std::free(ptr);
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  std::lock_guard lock(g_mu);
  *total = kDeviceMemory;
  *free_bytes = kDeviceMemory - g_used;
  return cudaSuccess;
}
cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned int) {
  *ptr = std::calloc(1, bytes ? bytes : 1);
  return *ptr ? cudaSuccess : set_last(cudaErrorMemoryAllocation);
}
cudaError_t cudaHostGetDevicePointer(void** device, void* host, unsigned int) {
  *device = host;
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void* ptr) {
  std::free(ptr);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind, cudaStream_t) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t) {
  std::memset(dst, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  static int token;
  *stream = reinterpret_cast<cudaStream_t>(&token);
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = reinterpret_cast<cudaEvent_t>(new Event);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete reinterpret_cast<Event*>(event);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  reinterpret_cast<Event*>(event)->seconds = now_seconds();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  *ms = static_cast<float>((reinterpret_cast<Event*>(end)->seconds - reinterpret_cast<Event*>(start)->seconds) * 1e3);
  return cudaSuccess;
}

}  // extern "C"

namespace attnbench::cuda {

// The peaks probe's kernels: a copy is a copy; the rate kernels report nothing measured.
cudaError_t launch_copy(const void* src, void* dst, size_t bytes, int, cudaStream_t) {
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t launch_read(const void*, void*, size_t, int, cudaStream_t) { return cudaSuccess; }
cudaError_t launch_mma_rate(MmaInput, float*, int, int, cudaStream_t, double* flops) {
  *flops = 0;
  return cudaSuccess;
}
cudaError_t launch_fma_rate(float*, int, int, cudaStream_t, double* flops) {
  *flops = 0;
  return cudaSuccess;
}
// Launches run at once here, so there is nothing for a held stream to wait behind.
cudaError_t launch_hold(const volatile uint32_t*, uint32_t, volatile uint32_t*, uint64_t, cudaStream_t) {
  return cudaSuccess;
}
const void* any_kernel() {
  static int token;
  return &token;
}

}  // namespace attnbench::cuda
