// zeromerge (the prefill init) on CUDA: the SnapKV scorer (snapkv_scorer_cuda.h) over every prompt
// query, as h2o's prefill, with each query's decay (log_decay: combine folds γ^(w−1−i) into the
// row's 1/l); then the family's stages (scored_selection_cuda.h), the merge of the evicted tokens
// into the dense slots among them (kv_stages.h). The decode steps are zeromerge_decode's.
#include "snapkv_scorer_cuda.h"

ATTNBENCH_IMPL(attnbench::cuda::CudaSnapkvScorer, "zeromerge", "cuda", "radix");
