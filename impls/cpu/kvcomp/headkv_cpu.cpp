// headkv on the CPU: the SnapKV scorer (snapkv_scorer_cpu.h), per-head budgets planned from the head scores.
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "headkv", "cpu", "pooled");
