#include "cpu_peaks.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "attnbench/error.h"

namespace attnbench::cpu {

namespace {

using Clock = std::chrono::steady_clock;

// One array of the bandwidth probes: twice the last-level cache, as the cold flush reads, and
// never under the stream benchmarks' 256 MiB.
size_t array_bytes(size_t llc) { return std::max(size_t{256} << 20, 2 * llc) & ~((size_t{2} << 20) - 1); }

struct HostArray {
  char* p = nullptr;
  explicit HostArray(size_t bytes) : p(static_cast<char*>(std::aligned_alloc(size_t{2} << 20, bytes))) {}
  ~HostArray() { std::free(p); }
};

// Best rate of `bytes_per_rep / seconds` over `reps` runs of body(first, last) split over the pool.
template <typename Body>
double best_rate(ThreadPool& pool, int reps, double bytes_per_rep, const Body& body) {
  double best = 0;
  for (int rep = 0; rep < reps; ++rep) {
    const auto t0 = Clock::now();
    pool.parallel_for(pool.size(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) body(i);
    });
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, bytes_per_rep / s);
  }
  return best;
}

// Eight streams per thread, read in step: the L2 streamer keeps more lines in flight for several
// streams than for one (measured on this project's 2-core VM: 27 GB/s with one stream per
// thread, 33 with eight), and a kernel reading K and V of several heads has several.
constexpr int kStreams = 8;

__attribute__((target("avx512f"))) uint64_t read_part_avx512(const char* p, size_t bytes) {
  const size_t stream = bytes / kStreams & ~size_t{127};
  __m512i acc[kStreams];
  for (__m512i& a : acc) a = _mm512_setzero_si512();
  for (size_t x = 0; x + 128 <= stream; x += 128)
#pragma GCC unroll 8
    for (int s = 0; s < kStreams; ++s) {
      const char* q = p + s * stream + x;
      acc[s] = _mm512_add_epi64(acc[s], _mm512_add_epi64(_mm512_load_si512(q), _mm512_load_si512(q + 64)));
    }
  __m512i t = acc[0];
  for (int s = 1; s < kStreams; ++s) t = _mm512_add_epi64(t, acc[s]);
  return static_cast<uint64_t>(_mm512_reduce_add_epi64(t));
}

uint64_t read_part_avx2(const char* p, size_t bytes) {
  const size_t stream = bytes / kStreams & ~size_t{63};
  __m256i acc[kStreams];
  for (__m256i& a : acc) a = _mm256_setzero_si256();
  for (size_t x = 0; x + 64 <= stream; x += 64)
#pragma GCC unroll 8
    for (int s = 0; s < kStreams; ++s) {
      const auto* q = reinterpret_cast<const __m256i*>(p + s * stream + x);
      acc[s] = _mm256_add_epi64(acc[s], _mm256_add_epi64(_mm256_load_si256(q), _mm256_load_si256(q + 1)));
    }
  __m256i t = acc[0];
  for (int s = 1; s < kStreams; ++s) t = _mm256_add_epi64(t, acc[s]);
  alignas(32) uint64_t out[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), t);
  return out[0] + out[1] + out[2] + out[3];
}

__attribute__((target("avx512f"))) void write_part_avx512(char* p, size_t bytes) {
  const __m512i v = _mm512_set1_epi32(0x01010101);
  for (size_t x = 0; x + 64 <= bytes; x += 64) _mm512_stream_si512(reinterpret_cast<__m512i*>(p + x), v);
  _mm_sfence();
}

void write_part_avx2(char* p, size_t bytes) {
  const __m256i v = _mm256_set1_epi32(0x01010101);
  for (size_t x = 0; x + 32 <= bytes; x += 32) _mm256_stream_si256(reinterpret_cast<__m256i*>(p + x), v);
  _mm_sfence();
}

// Arithmetic loops: kChains independent accumulators hide each unit's latency on every port; the
// loops are written out (not arrays) so the accumulators stay in registers.
constexpr int64_t kIters = 1 << 21;
constexpr int kChains = 12;

// (A lambda would not inherit the function's target: each loop is spelled out.)
#define ATTNBENCH_CHAINS(step)                  \
  for (int64_t it = 0; it < kIters; ++it) {     \
    _Pragma("GCC unroll 12") for (int i = 0; i < kChains; ++i) acc[i] = step; \
  }

__attribute__((target("avx512f"))) float fp32_loop_avx512() {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  ATTNBENCH_CHAINS(_mm512_fmadd_ps(acc[i], a, b));
  float sink = 0;
  for (const __m512& x : acc) sink += _mm512_reduce_add_ps(x);
  return sink;
}

float fp32_loop_avx2() {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  ATTNBENCH_CHAINS(_mm256_fmadd_ps(acc[i], a, b));
  alignas(32) float out[8];
  float sink = 0;
  for (const __m256& x : acc) {
    _mm256_store_ps(out, x);
    for (float v : out) sink += v;
  }
  return sink;
}

__attribute__((target("avx512f,avx512bf16"))) float bf16_dot_loop() {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512bh a = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3F80));  // 1.0
  const __m512bh b = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3380));  // 6e-8
  ATTNBENCH_CHAINS(_mm512_dpbf16_ps(acc[i], a, b));
  float sink = 0;
  for (const __m512& x : acc) sink += _mm512_reduce_add_ps(x);
  return sink;
}

__attribute__((target("avx512f,avx512fp16"))) float f16_fma_loop() {
  __m512h acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ph(static_cast<_Float16>(static_cast<float>(i) * 1e-3f));
  const __m512h a = _mm512_set1_ph(static_cast<_Float16>(0.999f)), b = _mm512_set1_ph(static_cast<_Float16>(1e-4f));
  ATTNBENCH_CHAINS(_mm512_fmadd_ph(acc[i], a, b));
  float sink = 0;
  for (const __m512h& x : acc) sink += static_cast<float>(_mm512_reduce_add_ph(x));
  return sink;
}

// Four accumulator tiles of 16×16 fp32, each fed by two 16×32 bf16 operand tiles: the shape of
// the attention kernels' own tiles.
constexpr int64_t kAmxIters = 1 << 19;

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

__attribute__((target("amx-tile,amx-bf16"))) float amx_bf16_loop() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.rows[t] = 16;
    cfg.bytes_per_row[t] = 64;
  }
  alignas(64) uint16_t operand[16 * 32];
  alignas(64) float out[16 * 16];
  std::fill(operand, operand + 16 * 32, uint16_t{0x3380});
  _tile_loadconfig(&cfg);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  for (int64_t it = 0; it < kAmxIters; ++it) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}

// flops per second of `loop` (flops_per_call each) on every thread, best of 3.
template <typename Loop>
double flops_rate(ThreadPool& pool, double flops_per_call, const Loop& loop) {
  const int64_t threads = pool.size();
  std::vector<double> sink(threads);  // one slot per task: the results are used, not shared
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    pool.parallel_for(threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sink[i] += loop();
    });
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, static_cast<double>(threads) * flops_per_call / s);
  }
  volatile double keep = 0;
  for (double x : sink) keep = keep + x;
  return best;
}

}  // namespace

Peaks measure_cpu_peaks(ThreadPool& pool, Isa isa, bool amx, size_t llc) {
  Peaks p;
  const size_t bytes = array_bytes(llc);
  const int64_t parts = pool.size();
  const size_t part = (bytes / parts) & ~size_t{4095};
  const size_t total = part * parts;
  const bool wide = isa == Isa::avx512;
  const std::string where = cat(" on ", parts, " threads");
  {
    HostArray src(bytes), dst(bytes);
    if (!src.p || !dst.p) throw BackendError(cat("cpu: no memory for the peaks probe's 2×", bytes >> 20, " MiB"));
    // First touch on every thread (page faults are not bandwidth).
    pool.parallel_for(parts, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        std::memset(src.p + i * part, 1, part);
        std::memset(dst.p + i * part, 0, part);
      }
    });
    std::atomic<uint64_t> sink{0};
    const double read = best_rate(pool, 5, static_cast<double>(total), [&](int64_t i) {
      sink += wide ? read_part_avx512(src.p + i * part, part) : read_part_avx2(src.p + i * part, part);
    });
    const double write = best_rate(pool, 5, static_cast<double>(total), [&](int64_t i) {
      if (wide) write_part_avx512(dst.p + i * part, part);
      else write_part_avx2(dst.p + i * part, part);
    });
    const double copy = best_rate(pool, 5, 2.0 * static_cast<double>(total),
                                  [&](int64_t i) { std::memcpy(dst.p + i * part, src.p + i * part, part); });
    const std::string array = cat(bytes >> 20, " MiB");
    p.add(ceilings::read, read,
          cat("vector loads over ", array, where, ", ", kStreams, " streams a thread, bytes read, best of 5"));
    p.add(ceilings::write, write, cat("non-temporal stores over ", array, where, ", bytes written, best of 5"));
    p.add(ceilings::copy, copy, cat("memcpy of ", array, where, ", bytes read + written, best of 5"));
    volatile uint64_t keep = sink.load();
    (void)keep;
  }
  const double lanes = wide ? 16 : 8;
  p.add(ceilings::fp32,
        flops_rate(pool, kIters * kChains * lanes * 2.0, [&] { return wide ? fp32_loop_avx512() : fp32_loop_avx2(); }),
        cat("fp32 FMA (", isa_name(isa), ")", where, ", best of 3"));
  __builtin_cpu_init();
  if (wide && __builtin_cpu_supports("avx512bf16"))
    p.add("bf16_dot_flops_per_s", flops_rate(pool, kIters * kChains * 32 * 2.0, bf16_dot_loop),
          cat("VDPBF16PS, bf16 pairs into fp32", where, ", best of 3"));
  if (wide && __builtin_cpu_supports("avx512fp16"))
    p.add("f16_fma_flops_per_s", flops_rate(pool, kIters * kChains * 32 * 2.0, f16_fma_loop),
          cat("VFMADDPH, f16 accumulation (no kernel here takes it: attention accumulates in fp32)", where,
              ", best of 3"));
  if (amx)
    p.add(kAmxBf16Ceiling, flops_rate(pool, kAmxIters * 4 * 16 * 16 * 32 * 2.0, amx_bf16_loop),
          cat("TDPBF16PS on AMX tiles, 16×16 fp32 += 16×32 · 32×16 bf16, four accumulators", where, ", best of 3"));
  p.how = cat("host clock around each pass of the backend's pool (", parts, " threads)");
  return p;
}

}  // namespace attnbench::cpu
