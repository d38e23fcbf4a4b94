// The CPU backend: host memory, a steady_clock timer, the project's thread pool, and runtime
// ISA detection so kernels built for the x86-64-v3 baseline can dispatch to AVX-512 (isa.h).
// Options: cpu.threads (ATTNBENCH_CPU_THREADS), default every hardware thread; cpu.isa
// (ATTNBENCH_CPU_ISA), default the widest the CPU has; cpu.amx (ATTNBENCH_CPU_AMX), default on
// where the CPU has AMX-BF16 and the OS grants its tiles.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/thread_pool.h"
#include "cpu_caches.h"
#include "isa.h"

namespace attnbench::cpu {

class CpuBackend final : public Backend {
 public:
  CpuBackend();
  ~CpuBackend() override;

  std::string name() const override { return "cpu"; }
  std::vector<BackendOption> options() const override;
  Probe probe() override;
  Allocator& allocator() override;
  void upload(const HostTensor& src, Buffer& dst) override;
  void download(const Buffer& src, HostTensor& dst) override;
  DeviceTimer& timer() override;
  void synchronize() override {}
  Peaks measure_peaks() override;
  size_t cache_bytes() const override;
  bool flush_cache() override;

  ThreadPool& pool();   // created on first use with cpu.threads threads
  Isa isa();            // cpu.isa, else the widest the CPU has; InputError for one it lacks
  bool amx();           // bf16 products on AMX tiles (cpu.amx; needs isa avx512 and amx_bf16_usable())
  bool rope_fused();    // cpu.rope=fused: the attention kernels rotate q and k as they load them
  // The cache hierarchy (sysfs, else sysconf), read once; cache_bytes() is its last level.
  const CacheHierarchy& caches() const;
  // The kernels of `Table` for this backend's ISA (isa.h).
  template <typename Table>
  const Table& kernels() {
    return kernels_for<Table>(isa());
  }

 private:
  class HostAllocator;
  class SteadyTimer;
  std::unique_ptr<HostAllocator> allocator_;
  std::unique_ptr<SteadyTimer> timer_;
  std::unique_ptr<ThreadPool> pool_;
  std::optional<Isa> isa_;
  std::optional<bool> amx_;
  std::optional<Probe> probe_;
  std::vector<char> flush_buffer_;  // read across all threads to evict the caches
  uint64_t flush_sink_ = 0;         // what the reads summed to (so they happen)
};

// Every impl of this backend receives the CpuBackend it was prepared on.
CpuBackend& as_cpu(Backend& b);

}  // namespace attnbench::cpu
