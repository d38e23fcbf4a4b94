// In-run ceilings of the CPU (docs/design.md "Contracts"): copy bandwidth (bytes read + written) over arrays
// far larger than the caches, and the fp32 FMA rate of the dispatched ISA on every thread.
#pragma once

#include "attnbench/backend.h"
#include "attnbench/thread_pool.h"
#include "cpu_backend.h"

namespace attnbench::cpu {

Peaks measure_cpu_peaks(ThreadPool& pool, Isa isa);

}  // namespace attnbench::cpu
