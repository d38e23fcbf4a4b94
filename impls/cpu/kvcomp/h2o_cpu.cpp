// h2o on the CPU. Prefill: the SnapKV scorer (snapkv_scorer_cpu.h) with every prompt query as its
// window, blocked over the queries: the causal column sums, never a T × T matrix. Decode: the
// per-step eviction (eviction_step_cpu.h).
#include "eviction_step_cpu.h"
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "h2o", "cpu", "pooled");
ATTNBENCH_IMPL(attnbench::cpu::CpuEvictionStep, "h2o", "cpu", "step");
