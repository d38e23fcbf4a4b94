// duoattention on the CPU (variant "gather"): once the streaming heads are planned (per-row
// budgets from the gate scores), positions only, so the family's stages are all of it
// (scored_selection_cpu.h): a streaming head's sinks and recent window, a retrieval head's every
// token as kept indices, then each row's runs of K and V copied whole. No scoring. Bound by memory
// bandwidth.
#include "scored_selection_cpu.h"

namespace attnbench::cpu {
namespace {

class CpuDuoattention final : public CpuScoredSelection {};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuDuoattention, "duoattention", "cpu", "gather");
