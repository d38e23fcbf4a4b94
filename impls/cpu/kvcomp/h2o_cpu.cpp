// h2o on the CPU: the SnapKV scorer (snapkv_scorer_cpu.h) with every prompt query as its window, blocked over
// the queries: the causal column sums, never a T × T matrix.
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "h2o", "cpu", "pooled");
