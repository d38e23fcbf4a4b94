// duoattention on CUDA (variant "gather"): once the streaming heads are planned (per-row budgets
// from the gate scores), positions only, so the family's stages are all of it
// (scored_selection_cuda.h): the select kernel writes a streaming head's sinks and recent window
// and a retrieval head's every token without reading a score, the gather copies their rows. No
// scoring. Bound by memory bandwidth.
#include "scored_selection_cuda.h"

namespace attnbench::cuda {
namespace {

class CudaDuoattention final : public CudaScoredSelection {};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaDuoattention, "duoattention", "cuda", "gather");
