// The CUDA device emulated on a CPU (ATTNBENCH_CUDA_EMULATION): the attention family's kernels, its
// stage and impls and the CUDA backend itself compiled by g++ and run here, so their `[cuda]` tests
// run where no GPU is (the attnbench_cuda_emulation test binary; docs/cuda.md "Emulation").
//
// Forced into every emulated translation unit (-include) before anything else. A launch runs its
// blocks one after the other; each thread of a block is a fiber (a stack of its own) that runs until it
// reaches a barrier or a warp-wide instruction — __syncthreads, a named barrier, a shuffle, a
// ballot, ldmatrix, mma — where it waits for the threads that instruction needs, and the last to
// arrive carries it out for all of them. So warp-synchronous code (ldmatrix addresses from every
// lane, mma fragments spread over a warp) runs as on the device, with these differences:
//   - cp.async copies land when a wait_group covering their group runs, not before (a read of a
//     tile the kernel did not wait for sees what was there), in issue order;
//   - dynamic shared memory starts as 0xff bytes (NaN in every float type), so a read of an element
//     nothing wrote shows;
//   - mma.sync accumulates in double and rounds once (the tensor cores' order and truncation are
//     not modelled: results agree to fp32's rounding, not bit for bit);
//   - ex2.approx is exp2f (__expf its exp2f of x·log2 e), and multiplies and adds contract into FMAs
//     where nvcc's default would (-ffp-contract=fast; __fmul_rn stays a plain multiply);
//   - a thread that waits for lanes that never arrive (a divergent barrier or collective) stops the
//     launch with an error naming the block, the thread and the instruction.
#pragma once

// A block's __shared__ arrays: one copy for all of its fibers (blocks run one at a time). Defined
// before CUDA's headers, which then leave it alone.
#define __shared__ static
#define __launch_bounds__(...)

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>  // as nvcc includes it in every .cu file (the typed cudaMalloc among others)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>

using std::max;  // CUDA's device min and max, for the kernels' unqualified calls
using std::min;

namespace attnbench::cuda::emulation {

// The calling fiber's coordinates, and its block's dynamic shared memory.
const uint3& thread_idx();
const uint3& block_idx();
const dim3& block_dim();
const dim3& grid_dim();
unsigned char* dynamic_smem();
uint32_t smem_offset(const void* p);  // a pointer into dynamic shared memory as its shared address

// Barriers and warp-wide operations of the calling fiber.
void barrier(int id, int threads);  // threads 0: every live thread of the block (__syncthreads)
// Of the lanes in `mask` (the whole warp, or an aligned part of it that runs apart from the rest).
void warp_barrier(uint32_t mask);
uint64_t shuffle(uint32_t mask, uint64_t value, int mode, int arg, int width);  // mode 0 xor, 1 index, 2 up, 3 down
uint32_t ballot(uint32_t mask, bool predicate);
uint32_t match_any(uint32_t mask, uint64_t value);

// Runs every block of a launch; false with the reason when a thread failed (the launch's error).
bool run_grid(dim3 grid, dim3 block, size_t smem_bytes, const std::function<void()>& body);

template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, const Args&... args) {
  const std::tuple<std::decay_t<Params>...> copy(args...);  // the kernel's parameters, as passed by value
  return run_grid(grid, block, smem, [&] { std::apply(kernel, copy); }) ? cudaSuccess : cudaErrorLaunchFailure;
}

// An H200's occupancy rule for the shared memory alone: 228 KiB per SM, 1 KiB of it reserved per
// block, at most 227 KiB for one block, 2048 threads per SM.
cudaError_t configure(int threads, size_t smem, int* ctas_per_sm);

}  // namespace attnbench::cuda::emulation

#define threadIdx (::attnbench::cuda::emulation::thread_idx())
#define blockIdx (::attnbench::cuda::emulation::block_idx())
#define blockDim (::attnbench::cuda::emulation::block_dim())
#define gridDim (::attnbench::cuda::emulation::grid_dim())
#define ATTNBENCH_DYNAMIC_SMEM(type, name) \
  type* name = reinterpret_cast<type*>(::attnbench::cuda::emulation::dynamic_smem())

inline void __syncthreads() { ::attnbench::cuda::emulation::barrier(0, 0); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::attnbench::cuda::emulation::warp_barrier(mask); }

template <typename T>
uint64_t emulation_bits(T v) {
  static_assert(sizeof(T) <= 8, "a shuffled value fits 8 bytes");
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof(T));
  return u;
}
template <typename T>
T emulation_value(uint64_t u) {
  T v;
  std::memcpy(&v, &u, sizeof(T));
  return v;
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return emulation_value<T>(::attnbench::cuda::emulation::shuffle(mask, emulation_bits(v), 0, lane_mask, width));
}
template <typename T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
  return emulation_value<T>(::attnbench::cuda::emulation::shuffle(mask, emulation_bits(v), 1, src_lane, width));
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return emulation_value<T>(::attnbench::cuda::emulation::shuffle(mask, emulation_bits(v), 2, static_cast<int>(delta), width));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return emulation_value<T>(::attnbench::cuda::emulation::shuffle(mask, emulation_bits(v), 3, static_cast<int>(delta), width));
}
inline unsigned __ballot_sync(unsigned mask, int predicate) { return ::attnbench::cuda::emulation::ballot(mask, predicate != 0); }
template <typename T>
unsigned __match_any_sync(unsigned mask, T value) {
  return ::attnbench::cuda::emulation::match_any(mask, emulation_bits(value));
}
// Atomics: one fiber runs at a time and none yields inside one, so a plain update is atomic.
template <typename T>
T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}
template <typename T>
T atomicMin(T* address, T value) {
  const T old = *address;
  if (value < old) *address = value;
  return old;
}
template <typename T>
T __ldg(const T* p) {
  return *p;
}
inline int __clz(unsigned x) { return x == 0 ? 32 : __builtin_clz(x); }
inline float __expf(float x) { return std::exp2(x * 1.44269504f); }  // as the device: ex2.approx of x·log2(e)
inline float __uint_as_float(unsigned x) { return emulation_value<float>(x); }
inline unsigned __float_as_uint(float x) { return static_cast<unsigned>(emulation_bits(x)); }
inline void __threadfence() {}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline float __int_as_float(int x) { return emulation_value<float>(static_cast<uint32_t>(x)); }
inline float __fmul_rn(float a, float b) {
  float r = a * b;
  asm("" : "+x"(r));  // rounded here: never contracted into a following add (-ffp-contract=fast)
  return r;
}
inline size_t __cvta_generic_to_shared(const void* p) { return ::attnbench::cuda::emulation::smem_offset(p); }
