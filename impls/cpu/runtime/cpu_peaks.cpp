#include "cpu_peaks.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "attnbench/error.h"

namespace attnbench::cpu {

namespace {

using Clock = std::chrono::steady_clock;

// Two arrays of this size: far beyond any L3, as the stream benchmarks do.
constexpr size_t kCopyBytes = size_t{256} << 20;

double copy_bytes_per_s(ThreadPool& pool) {
  auto* src = static_cast<char*>(std::aligned_alloc(4096, kCopyBytes));
  auto* dst = static_cast<char*>(std::aligned_alloc(4096, kCopyBytes));
  if (!src || !dst) {
    std::free(src);
    std::free(dst);
    return 0;
  }
  const int64_t parts = pool.size();
  const size_t part = (kCopyBytes / parts) & ~size_t{4095};
  // First touch on every thread (page faults are not bandwidth).
  pool.parallel_for(parts, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      std::memset(src + i * part, 1, part);
      std::memset(dst + i * part, 0, part);
    }
  });
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = Clock::now();
    pool.parallel_for(parts, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) std::memcpy(dst + i * part, src + i * part, part);
    });
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 2.0 * static_cast<double>(part * parts) / s);
  }
  std::free(src);
  std::free(dst);
  return best;
}

constexpr int64_t kFmaIters = 1 << 22;

// 12 independent accumulators hide the FMA latency on both ports.
__attribute__((target("avx512f"))) double fma_loop_avx512() {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < kFmaIters; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  float sink = 0;
  for (int i = 0; i < 12; ++i) sink += _mm512_reduce_add_ps(acc[i]);
  return sink;
}

double fma_loop_avx2() {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < kFmaIters; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  float out[8], sink = 0;
  for (int i = 0; i < 12; ++i) {
    _mm256_storeu_ps(out, acc[i]);
    for (float x : out) sink += x;
  }
  return sink;
}

double flops_per_s(ThreadPool& pool, Isa isa) {
  const int64_t threads = pool.size();
  const double lanes = isa == Isa::avx512 ? 16 : 8;
  std::vector<double> sink(threads);  // one slot per task: the results must be used, not shared
  double best = 0;
  for (int rep = 0; rep < 2; ++rep) {
    const auto t0 = Clock::now();
    pool.parallel_for(threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sink[i] += isa == Isa::avx512 ? fma_loop_avx512() : fma_loop_avx2();
    });
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, static_cast<double>(threads) * kFmaIters * 12 * lanes * 2 / s);
  }
  volatile double keep = 0;
  for (double x : sink) keep = keep + x;
  return best;
}

}  // namespace

Peaks measure_cpu_peaks(ThreadPool& pool, Isa isa) {
  Peaks p;
  p.copy_bytes_per_s = copy_bytes_per_s(pool);
  p.flops_per_s = flops_per_s(pool, isa);
  p.how = cat("copy: memcpy of 2×", kCopyBytes >> 20, " MiB arrays on ", pool.size(),
              " threads, bytes read + written, best of 5; flops: fp32 FMA (", isa_name(isa), ") on ", pool.size(),
              " threads, best of 2");
  return p;
}

}  // namespace attnbench::cpu
