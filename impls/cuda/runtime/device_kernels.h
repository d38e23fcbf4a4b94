// Host entry points of the backend's own kernels: the peaks probe (a read, a copy, mma loops, an
// FMA loop) and the stream hold of cold timing. Launch errors are returned, not thrown.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace attnbench::cuda {

// dst[i] = src[i] over `bytes` (a multiple of 16) with 16-byte loads and stores, `blocks` CTAs.
cudaError_t launch_copy(const void* src, void* dst, size_t bytes, int blocks, cudaStream_t stream);

// Reads `bytes` (a multiple of 16) of src with 16-byte loads, `blocks` CTAs, into per-thread XOR
// accumulators. `sink` (blocks × 256 × 16 bytes) receives a thread's fold only when it is ~0, which
// a buffer of one repeated 32-bit word never gives: no writes in practice, yet no load can be dropped.
cudaError_t launch_read(const void* src, void* sink, size_t bytes, int blocks, cudaStream_t stream);

// The 16-bit input types of the tensor-core path.
enum class MmaInput { bf16, f16 };

// mma.sync m16n8k16 on `input` (f32 accumulate) in a loop on varied, non-zero operands; *flops is
// what one launch performs. `sink` receives nothing in practice (it keeps the loop alive).
cudaError_t launch_mma_rate(MmaInput input, float* sink, int blocks, int iters, cudaStream_t stream, double* flops);
// The same with fp32 FFMA on the CUDA cores.
cudaError_t launch_fma_rate(float* sink, int blocks, int iters, cudaStream_t stream, double* flops);

// A one-thread kernel that spins until *release (host-mapped) reaches `generation` (comparison
// modulo 2^32), or `timeout_ns` passes, in which case it writes `generation` to *timed_out.
cudaError_t launch_hold(const volatile uint32_t* release, uint32_t generation, volatile uint32_t* timed_out,
                        uint64_t timeout_ns, cudaStream_t stream);

// A kernel of this library: cudaFuncGetAttributes on it tells whether the binary has code the
// device can run.
const void* any_kernel();

}  // namespace attnbench::cuda
