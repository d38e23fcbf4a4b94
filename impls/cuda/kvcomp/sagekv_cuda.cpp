// sagekv on CUDA: the SnapKV scorer (snapkv_scorer_cuda.h), one query, sinks and a recent window.
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "sagekv", "cuda", "radix");
