// tova on the CPU: the SnapKV scorer (snapkv_scorer_cpu.h), one query, one ranking per sequence.
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "tova", "cpu", "pooled");
