// zeromerge (the prefill init) on the CPU: the SnapKV scorer (snapkv_scorer_cpu.h) over every
// prompt query with its decay, then the family's stages, the merge of the evicted tokens among
// them (kv_stages.h). The decode steps are zeromerge_decode's (zeromerge_decode_cpu.cpp).
#include "snapkv_scorer_cpu.h"

ATTNBENCH_IMPL(attnbench::cpu::CpuSnapkvScorer, "zeromerge", "cpu", "pooled");
