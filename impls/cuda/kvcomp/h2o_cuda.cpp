// h2o on CUDA. Prefill: the SnapKV scorer (snapkv_scorer_cuda.h) with every prompt query as its
// window, blocked over the queries: the causal column sums, never a T × T matrix. Decode: the
// per-step eviction (eviction_step_cuda.h).
#include "eviction_step_cuda.h"
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "h2o", "cuda", "radix");
ATTNBENCH_IMPL(attnbench::cuda::CudaEvictionStep, "h2o", "cuda", "step");
