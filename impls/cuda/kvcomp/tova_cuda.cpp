// tova on CUDA. Prefill: the SnapKV scorer (snapkv_scorer_cuda.h), one query, one ranking per
// sequence. Decode: the per-step eviction (eviction_step_cuda.h).
#include "eviction_step_cuda.h"
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "tova", "cuda", "radix");
ATTNBENCH_IMPL(attnbench::cuda::CudaEvictionStep, "tova", "cuda", "step");
