#include "cuda_peaks.h"

#include <algorithm>
#include <vector>

#include "attnbench/error.h"
#include "cuda_check.h"
#include "device_kernels.h"

namespace attnbench::cuda {

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

Peaks measure_cuda_peaks(cudaStream_t stream, int sms) {
  Scratch scratch;
  const cudaEvent_t start = scratch.event(), stop = scratch.event();
  // Times `launch` `reps` times after one warm-up; the shortest run.
  const auto best_seconds = [&](int reps, const auto& launch) {
    launch();
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      ATTNBENCH_CUDA_CHECK(cudaEventRecord(start, stream));
      launch();
      ATTNBENCH_CUDA_CHECK(cudaEventRecord(stop, stream));
      ATTNBENCH_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      ATTNBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      best = std::min(best, 1e-3 * ms);
    }
    return best;
  };

  // Read and copy: two arrays of up to 1 GiB each (far beyond the L2); the read probe's sink is
  // the copy's destination, which is large enough for one 16-byte word per thread.
  size_t free_bytes = 0, total = 0;
  ATTNBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const size_t copy_bytes = std::min<size_t>(size_t{1} << 30, free_bytes / 4) & ~((size_t{1} << 20) - 1);
  void* src = scratch.alloc(copy_bytes);
  void* dst = scratch.alloc(copy_bytes);
  auto* sink = static_cast<float*>(scratch.alloc(sizeof(float)));
  ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(src, 1, copy_bytes, stream));
  Peaks peaks;
  const double read_s =
      best_seconds(10, [&] { ATTNBENCH_CUDA_CHECK(launch_read(src, dst, copy_bytes, sms * 8, stream)); });
  peaks.add(ceilings::read, static_cast<double>(copy_bytes) / read_s,
            cat("16-byte loads over ", copy_bytes >> 20, " MiB, bytes read, best of 10"));
  const double copy_s = best_seconds(10, [&] { ATTNBENCH_CUDA_CHECK(launch_copy(src, dst, copy_bytes, sms * 8, stream)); });
  peaks.add(ceilings::copy, 2.0 * static_cast<double>(copy_bytes) / copy_s,
            cat("16-byte loads and stores over 2×", copy_bytes >> 20, " MiB, bytes read + written, best of 10"));

  double fma_flops = 0;
  const double fma_s = best_seconds(5, [&] { ATTNBENCH_CUDA_CHECK(launch_fma_rate(sink, sms * 8, 4096, stream, &fma_flops)); });
  peaks.add(ceilings::fp32, fma_flops / fma_s, cat("fp32 FFMA chains on all ", sms, " SMs, best of 5"));
  // One rate per input type of the tensor-core path: often equal, but a row is judged against
  // the instruction its kernels issue, not a neighbour's.
  struct MmaProbe {
    MmaInput input;
    const char* ceiling;
    const char* type;
  };
  for (const MmaProbe& m :
       {MmaProbe{MmaInput::bf16, kMmaBf16Ceiling, "bf16"}, MmaProbe{MmaInput::f16, kMmaF16Ceiling, "f16"}}) {
    double mma_flops = 0;
    const double mma_s = best_seconds(
        5, [&] { ATTNBENCH_CUDA_CHECK(launch_mma_rate(m.input, sink, sms * 4, 4096, stream, &mma_flops)); });
    peaks.add(m.ceiling, mma_flops / mma_s,
              cat("mma.sync m16n8k16 ", m.type, " with f32 accumulation on all ", sms,
                  " SMs (the tensor-core path of the attention kernels), best of 5"));
  }
  peaks.how = cat("CUDA events on the backend's stream, ", sms, " SMs");
  return peaks;
}

}  // namespace attnbench::cuda
