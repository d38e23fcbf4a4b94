// adakv on the CPU: the SnapKV scorer (snapkv_scorer_cpu.h), budgets chosen across the KV heads (the family's across stage).
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "adakv", "cpu", "pooled");
