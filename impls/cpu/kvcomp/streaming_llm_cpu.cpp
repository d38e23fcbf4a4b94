// streaming_llm on the CPU (variant "gather"): positions only, so the family's stages are all of
// it (scored_selection_cpu.h): the sinks and the recent window as kept indices, then each row's
// two runs of K and V copied whole. Bound by memory bandwidth.
#include "scored_selection_cpu.h"

namespace attnbench::cpu {
namespace {

class CpuStreamingLlm final : public CpuScoredSelection {};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuStreamingLlm, "streaming_llm", "cpu", "gather");
