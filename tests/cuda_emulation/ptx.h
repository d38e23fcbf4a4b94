// impls/cuda/runtime/ptx.cuh's functions carried out by the emulated device (device.h): the same
// names and fragment layouts, each instruction done for the whole warp by its last lane to arrive.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace attnbench::cuda::emulation {
void cp_async(uint32_t dst, const void* src, bool valid);
void cp_async_commit();
void cp_async_wait(int pending);
// ldmatrix .m8n8.x4 (.trans): the four registers of the calling lane.
void ldmatrix_x4(uint32_t addr, bool trans, uint32_t (&r)[4]);
// mma.sync.m16n8k16.row.col.f32 with 16-bit inputs (bf16 or f16), d += a·b for the calling lane.
void mma_m16n8k16(bool bf16, float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
}  // namespace attnbench::cuda::emulation

namespace attnbench::cuda::ptx {

inline uint32_t smem_addr(const void* p) { return emulation::smem_offset(p); }

inline void cp_async_16(uint32_t dst, const void* src, bool valid) { emulation::cp_async(dst, src, valid); }
inline void cp_async_commit() { emulation::cp_async_commit(); }
template <int N>
void cp_async_wait() {
  emulation::cp_async_wait(N);
}

inline void named_barrier(int id, int threads) { emulation::barrier(id, threads); }

inline void ldsm_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  uint32_t r[4];
  emulation::ldmatrix_x4(addr, false, r);
  r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3];
}
inline void ldsm_x4_trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  uint32_t r[4];
  emulation::ldmatrix_x4(addr, true, r);
  r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3];
}

template <typename T>
struct Mma {
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>, "mma takes bf16 or f16");
  static constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  static void run(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    emulation::mma_m16n8k16(kBf16, d, a, b0, b1);
  }
  // Two floats rounded to nearest even and packed, `lo` in the lower half.
  static uint32_t pack(float lo, float hi) {
    uint32_t r;
    if constexpr (kBf16) {
      const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
      std::memcpy(&r, &v, 4);
    } else {
      const __half2 v = __floats2half2_rn(lo, hi);
      std::memcpy(&r, &v, 4);
    }
    return r;
  }
};

inline float exp2_approx(float x) { return std::exp2(x); }

inline uint64_t global_timer_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace attnbench::cuda::ptx
