// h2o on CUDA: the SnapKV scorer (snapkv_scorer_cuda.h) with every prompt query as its window, blocked over
// the queries: the causal column sums, never a T × T matrix.
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "h2o", "cuda", "radix");
