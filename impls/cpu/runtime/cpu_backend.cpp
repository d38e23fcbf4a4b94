#include "cpu_backend.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "attnbench/error.h"
#include "cpu_caches.h"
#include "cpu_peaks.h"

namespace attnbench::cpu {

Isa widest_isa() {
  static const Isa isa = [] {
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    return avx512 ? Isa::avx512 : Isa::avx2;
  }();
  return isa;
}

std::string_view isa_name(Isa isa) { return isa == Isa::avx512 ? "avx512" : "avx2"; }

bool amx_bf16_usable() {
  // The CPU must have the tiles and their bf16 dot product, and Linux must let this process use
  // the tile data state (arch_prctl, asked once per process: the grant covers every thread).
  static const bool usable = [] {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-bf16")) return false;
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return usable;
}

class CpuBackend::HostAllocator final : public Allocator {
 public:
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  size_t max_allocation() const override {
    static const size_t total = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
    return total;
  }

 protected:
  Raw raw_allocate(size_t total) override {
    // Large buffers (a model's K/V cache) on transparent huge pages where the kernel offers them
    // (`madvise` mode is Debian's default): with 4 KiB pages a decode over a 32k cache walks the
    // page tables for every 4 KiB it streams, and a cold launch finds the tables evicted too.
    const bool huge = total >= kHugePageBytes;
    const size_t align = huge ? kHugePageBytes : 64;
    const size_t rounded = (total + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded);
    if (!p) throw BackendError(cat("cpu: host allocation of ", total, " bytes failed"));
    if (huge) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: 4 KiB pages if refused
    return {p, nullptr};
  }
  void raw_free(const Raw& raw) noexcept override { std::free(raw.native); }
  void raw_write(const Raw& raw, size_t offset, const void* src, size_t n) override {
    std::memcpy(static_cast<char*>(raw.native) + offset, src, n);
  }
  void raw_read(const Raw& raw, size_t offset, void* dst, size_t n) override {
    std::memcpy(dst, static_cast<const char*>(raw.native) + offset, n);
  }
};

class CpuBackend::SteadyTimer final : public DeviceTimer {
 public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  void stop() override { t1_ = std::chrono::steady_clock::now(); }
  double seconds() override { return std::chrono::duration<double>(t1_ - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_, t1_;
};

CpuBackend::CpuBackend()
    : allocator_(std::make_unique<HostAllocator>()), timer_(std::make_unique<SteadyTimer>()) {}
CpuBackend::~CpuBackend() = default;

std::vector<BackendOption> CpuBackend::options() const {
  return {{"threads", "", "worker threads of the CPU backend (default: every hardware thread)"},
          {"isa", "", "avx2 or avx512: the kernels' instruction set (default: the widest the CPU has)"},
          {"amx", "", "on or off: bf16 matrix products on AMX tiles (default: on where the CPU and the OS allow it)"},
          {"rope", "", "prepass or fused: how attention takes its rope_* parameters — rope's kernels rotate q and k "
                       "once first (default), or the attention kernels rotate them as they load them"}};
}

bool CpuBackend::rope_fused() {
  const std::string want = option("rope");
  if (!want.empty() && want != "prepass" && want != "fused") throw InputError(cat("cpu: rope=", want, " is not prepass or fused"));
  return want == "fused";
}

ThreadPool& CpuBackend::pool() {
  if (!pool_) {
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
    if (const std::string t = option("threads"); !t.empty()) {
      char* end = nullptr;
      const long v = std::strtol(t.c_str(), &end, 10);
      if (*end || v < 1 || v > 4096) throw InputError(cat("cpu: threads=", t, " is not a thread count in [1, 4096]"));
      n = static_cast<unsigned>(v);
    }
    pool_ = std::make_unique<ThreadPool>(n);
  }
  return *pool_;
}

namespace {
std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown CPU";
}
}  // namespace

Isa CpuBackend::isa() {
  if (!isa_) {
    isa_ = widest_isa();
    if (const std::string isa = option("isa"); !isa.empty()) {
      if (isa != "avx2" && isa != "avx512") throw InputError(cat("cpu: isa=", isa, " is not one of avx2, avx512"));
      if (isa == "avx512" && widest_isa() != Isa::avx512)
        throw InputError("cpu: isa=avx512, but this CPU lacks AVX-512 F/BW/VL/DQ");
      isa_ = isa == "avx2" ? Isa::avx2 : Isa::avx512;
    }
  }
  return *isa_;
}

bool CpuBackend::amx() {
  if (!amx_) {
    const std::string want = option("amx");
    if (!want.empty() && want != "on" && want != "off") throw InputError(cat("cpu: amx=", want, " is not on or off"));
    if (want == "on" && !amx_bf16_usable())
      throw InputError("cpu: amx=on, but this CPU or its OS offers no AMX-BF16 tiles to this process");
    amx_ = want != "off" && isa() == Isa::avx512 && amx_bf16_usable();
  }
  return *amx_;
}

const CacheHierarchy& CpuBackend::caches() const {
  static const CacheHierarchy h = read_cache_hierarchy();
  return h;
}

Probe CpuBackend::probe() {
  if (probe_) return *probe_;
  Probe p;
  p.available = true;
  const Isa chosen = isa();
  const unsigned threads = pool().size();
  p.device.name = cat(cpu_model(), " (", threads, " threads)");
  p.device.details["model"] = cpu_model();
  p.device.details["threads"] = threads;
  p.device.details["hardware_threads"] = std::thread::hardware_concurrency();
  p.device.details["isa"] = std::string(isa_name(chosen));
  p.device.details["amx_bf16"] = amx();
  p.device.details["caches"] = caches().to_json();
  p.limits.max_buffer_bytes = allocator_->max_allocation();
  p.limits.memory_bytes = allocator_->max_allocation();
  p.limits.compute_units = threads;
  __builtin_cpu_init();
  const std::pair<const char*, bool> features[] = {
      {"avx2", __builtin_cpu_supports("avx2")},         {"fma", __builtin_cpu_supports("fma")},
      {"avx512f", __builtin_cpu_supports("avx512f")},   {"avx512bw", __builtin_cpu_supports("avx512bw")},
      {"avx512vl", __builtin_cpu_supports("avx512vl")}, {"avx512bf16", __builtin_cpu_supports("avx512bf16")},
      {"avx512fp16", __builtin_cpu_supports("avx512fp16")}, {"amx_bf16", amx_bf16_usable()},
  };
  for (auto [name, has] : features)
    if (has) p.limits.features[name] = true;
  p.limits.isa = chosen == Isa::avx512 ? CpuIsa::avx512 : CpuIsa::avx2;
  probe_ = p;
  return p;
}

Allocator& CpuBackend::allocator() { return *allocator_; }
DeviceTimer& CpuBackend::timer() { return *timer_; }

void CpuBackend::upload(const HostTensor& src, Buffer& dst) {
  ATTNBENCH_ASSERT(src.bytes() == dst.bytes(), "upload size mismatch for ", dst.name());
  if (src.bytes()) std::memcpy(dst.ptr(), src.raw(), src.bytes());
}

void CpuBackend::download(const Buffer& src, HostTensor& dst) {
  ATTNBENCH_ASSERT(src.bytes() == dst.bytes(), "download size mismatch for ", src.name());
  if (dst.bytes()) std::memcpy(dst.raw(), src.ptr(), dst.bytes());
}

Peaks CpuBackend::measure_peaks() { return measure_cpu_peaks(pool(), isa(), amx(), cache_bytes()); }

size_t CpuBackend::cache_bytes() const {
  const size_t llc = caches().last_level_bytes();
  return llc ? llc : size_t{64} << 20;
}

bool CpuBackend::flush_cache() {
  // Reading twice the last-level cache, spread over every thread, leaves none of the inputs resident
  // and the caches full of clean lines: a flush by writing would leave them dirty, and the timed
  // launch would pay for writing them back (measured: bf16 decode over a 32k cache lost a tenth
  // of its bandwidth to it). The buffer is written once, when it is made.
  const size_t bytes = 2 * cache_bytes();
  if (flush_buffer_.size() != bytes) flush_buffer_.assign(bytes, 1);
  ThreadPool& p = pool();
  const int64_t parts = p.size();
  const size_t part = bytes / parts;
  std::atomic<uint64_t> sink{0};
  p.parallel_for(parts, [&](int64_t b, int64_t e) {
    uint64_t sum = 0;
    for (int64_t i = b; i < e; ++i) {
      const char* base = flush_buffer_.data() + i * part;
      for (size_t x = 0; x + 8 <= part; x += 64) {  // one word of every cache line
        uint64_t w;
        std::memcpy(&w, base + x, 8);
        sum += w;
      }
    }
    sink.fetch_add(sum, std::memory_order_relaxed);  // the reads cannot be optimised away
  });
  flush_sink_ = sink.load(std::memory_order_relaxed);
  return true;
}

CpuBackend& as_cpu(Backend& b) {
  auto* cpu = dynamic_cast<CpuBackend*>(&b);
  ATTNBENCH_ASSERT(cpu, "a cpu impl was prepared on backend ", b.name());
  return *cpu;
}

}  // namespace attnbench::cpu

ATTNBENCH_BACKEND(attnbench::cpu::CpuBackend, "cpu");
