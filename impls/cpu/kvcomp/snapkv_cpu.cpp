// snapkv on the CPU: the SnapKV scorer with a uniform budget (snapkv_scorer_cpu.h).
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "snapkv", "cpu", "pooled");
