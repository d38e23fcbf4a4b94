// tokenselect on the CPU: the SnapKV scorer (snapkv_scorer_cpu.h) with a window of one query and
// each softmax over the candidates, one vote per sequence; then the family's select and the decode
// step over the kept set (scored_selection_cpu.h, selection-only).
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "tokenselect", "cpu", "pooled");
