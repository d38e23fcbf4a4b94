// streaming_llm on CUDA (variant "gather"): positions only, so the family's stages are all of it
// (scored_selection_cuda.h): the select kernel writes the sinks and the recent window, the gather
// copies their rows. Bound by memory bandwidth.
#include "scored_selection_cuda.h"

namespace attnbench::cuda {
namespace {

class CudaStreamingLlm final : public CudaScoredSelection {};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaStreamingLlm, "streaming_llm", "cuda", "gather");
