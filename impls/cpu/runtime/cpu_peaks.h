// In-run ceilings of the CPU (docs/design.md "Ceilings"), each on every thread of the pool:
//   read_bytes_per_s       vector loads summed into registers, eight streams a thread
//   write_bytes_per_s      non-temporal vector stores (the fastest way a kernel can write)
//   copy_bytes_per_s       memcpy, bytes read + written
// over arrays of twice the last-level cache (at least 256 MiB), best of 5; and the arithmetic
// rate of each compute path a kernel may take, best of 3:
//   fp32_flops_per_s       fp32 FMA of the dispatched ISA
//   bf16_dot_flops_per_s   VDPBF16PS (AVX512_BF16), bf16 pairs into fp32
//   f16_fma_flops_per_s    VFMADDPH (AVX512_FP16), which accumulates in f16
//   amx_bf16_flops_per_s   TDPBF16PS on AMX tiles, bf16 pairs into fp32
// the last three only where the CPU has them (and, for AMX, the OS grants the tiles).
#pragma once

#include <cstddef>

#include "attnbench/backend.h"
#include "attnbench/thread_pool.h"
#include "isa.h"

namespace attnbench::cpu {

Peaks measure_cpu_peaks(ThreadPool& pool, Isa isa, bool amx, size_t last_level_cache_bytes);

}  // namespace attnbench::cpu
