// adakv on CUDA: the SnapKV scorer (snapkv_scorer_cuda.h), budgets chosen across the KV heads (the family's across stage).
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "adakv", "cuda", "radix");
