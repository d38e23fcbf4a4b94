// sagekv on the CPU: the SnapKV scorer (snapkv_scorer_cpu.h), one query, sinks and a recent window.
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "sagekv", "cpu", "pooled");
