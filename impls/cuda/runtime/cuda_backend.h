// The CUDA backend: one device (option cuda.device, ATTNBENCH_CUDA_DEVICE), one stream, a tracked
// cudaMalloc allocator (cuda_allocator.h), CUDA-event timing and blocking copies on the stream
// (cuda_stream.h), an L2 flush and a stream hold for cold timing (cold_timing.h), NVML telemetry
// (cuda_telemetry.h, nvml.h: dlopen'ed), and a ceilings probe (cuda_peaks.h: read and copy kernels,
// FFMA and mma loops). This file pair keeps the Backend itself and probe().
//
// Without a usable GPU probe() answers available = false with the error's name: any error from
// cudaGetDeviceCount means "no GPU" (35, cudaErrorInsufficientDriver, where no driver is
// installed). A sticky CUDA error marks the device lost (cuda_check.h): every later call throws
// DeviceLostError at once.
//
// Untracked memory. Impls must allocate through allocator(); telemetry() compares the device's
// used memory (cudaMemGetInfo) with the backend's own baseline plus what the allocator holds and
// reports the difference as untracked_bytes, flagging untracked_allocation above a threshold
// (the harness records telemetry() after the checked run, so a cudaMalloc in prepare() or run()
// that is still held shows up in the row).
#pragma once

#include <algorithm>

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>

#include "attnbench/backend.h"

namespace attnbench::cuda {

class CudaAllocator;
class EventTimer;
class L2Flush;
class StreamHold;
class Nvml;

class CudaBackend final : public Backend {
 public:
  CudaBackend();
  ~CudaBackend() override;

  std::string name() const override { return "cuda"; }
  std::vector<BackendOption> options() const override;
  Probe probe() override;
  Allocator& allocator() override;
  void upload(const HostTensor& src, Buffer& dst) override;
  void download(const Buffer& src, HostTensor& dst) override;
  DeviceTimer& timer() override;
  void synchronize() override;
  Peaks measure_peaks() override;

  size_t cache_bytes() const override;
  bool flush_cache() override;
  bool hold_stream() override;
  void release_stream() override;
  Json telemetry() override;

  // For impls: the stream every kernel is enqueued on, and the device's properties.
  cudaStream_t stream() const { return stream_; }
  const cudaDeviceProp& props() const { return props_; }
  int device() const { return device_; }

 private:
  void open();             // probe()'s work; throws BackendError on a failing call
  void require_open();     // asserts an available device (impls run only after a good probe)

  std::optional<Probe> probe_;
  int device_ = 0;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<CudaAllocator> allocator_;
  std::unique_ptr<EventTimer> timer_;
  std::unique_ptr<Nvml> nvml_;
  std::unique_ptr<L2Flush> flush_;
  std::unique_ptr<StreamHold> hold_;
  // Device memory in use that is the context's and the backend's own, not any impl's.
  size_t baseline_used_ = 0;
};

// Every impl of this backend receives the CudaBackend it was prepared on.
CudaBackend& as_cuda(Backend& b);

// The grid of a kernel whose CTAs of `threads` take `rows` rows in turn: a CTA per row, at most
// `waves` waves of the CTAs the device holds at once (beyond that a CTA loops over rows).
inline int64_t row_grid(const cudaDeviceProp& props, int threads, int64_t rows, int64_t waves) {
  const int64_t resident = static_cast<int64_t>(props.multiProcessorCount) * (props.maxThreadsPerMultiProcessor / threads);
  return std::clamp<int64_t>(rows, 1, std::max<int64_t>(1, resident * waves));
}

}  // namespace attnbench::cuda
