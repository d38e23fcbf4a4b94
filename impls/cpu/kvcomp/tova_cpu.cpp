// tova on the CPU. Prefill: the SnapKV scorer (snapkv_scorer_cpu.h), one query, one ranking per
// sequence. Decode: the per-step eviction (eviction_step_cpu.h).
#include "eviction_step_cpu.h"
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "tova", "cpu", "pooled");
ATTNBENCH_IMPL(attnbench::cpu::CpuEvictionStep, "tova", "cpu", "step");
