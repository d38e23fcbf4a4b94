// tokenselect on CUDA: the SnapKV scorer (snapkv_scorer_cuda.h) with a window of one query and each
// softmax over the candidates, one vote per sequence; then the family's select and the decode step
// over the kept set (scored_selection_cuda.h, selection-only).
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "tokenselect", "cuda", "radix");
