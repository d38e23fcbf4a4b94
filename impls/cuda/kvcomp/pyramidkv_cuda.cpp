// pyramidkv on CUDA: the SnapKV scorer (snapkv_scorer_cuda.h), per-layer budget.
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "pyramidkv", "cuda", "radix");
