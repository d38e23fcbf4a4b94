// tova on CUDA: the SnapKV scorer (snapkv_scorer_cuda.h), one query, one ranking per sequence.
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "tova", "cuda", "radix");
