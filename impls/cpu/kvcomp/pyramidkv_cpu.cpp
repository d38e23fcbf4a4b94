// pyramidkv on the CPU: the SnapKV scorer (snapkv_scorer_cpu.h), per-layer budget.
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "pyramidkv", "cpu", "pooled");
