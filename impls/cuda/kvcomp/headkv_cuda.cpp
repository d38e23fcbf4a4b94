// headkv on CUDA: the SnapKV scorer (snapkv_scorer_cuda.h), per-head budgets planned from the head scores.
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "headkv", "cuda", "radix");
