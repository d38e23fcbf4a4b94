// snapkv on CUDA: the SnapKV scorer with a uniform budget (snapkv_scorer_cuda.h).
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "snapkv", "cuda", "radix");
