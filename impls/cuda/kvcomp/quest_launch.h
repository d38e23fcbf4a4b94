// The interface between quest on CUDA (quest_cuda.cpp) and its bounds kernel (quest.cu). Light on
// purpose: no JSON, no attnbench headers beyond the family's and the method's parameter structs.
#pragma once

#include <cuda_runtime_api.h>

#include "attention/attention_launch.h"  // Elem
#include "reference/kvcomp/quest_common.h"

namespace attnbench::cuda::quest {

// U_p = (1/G)·Σ_h Σ_c max(q_{h,c}·kmax_{p,c}, q_{h,c}·kmin_{p,c}) of every scored page of every
// cache row, fp32, written page_size times into scores [rows, candidates]. A block of kThreads
// owns one row and kThreads / lanes consecutive pages; `lanes` consecutive threads (a power of two
// ≤ 32) share a page, dealt its 16-byte words (or, when a row is not whole words, its elements)
// in turn, and add their sums by warp shuffles in a fixed order.
struct Args {
  kvcomp::SelectionParams sel;
  kvcomp::QuestParams m;
  const void* q;                  // [batch·q_heads, head_dim]: the decode queries
  const void *kmin, *kmax;        // [rows, pages, head_dim]
  float* scores;
  int lanes;
  int stage_heads;                // query heads staged in shared memory at a time (≤ kQueryFloats / head_dim)
  int blocks;                     // page blocks per row: the grid is rows·blocks
};

inline constexpr int kThreads = 256;
inline constexpr int kQueryFloats = 4096;  // 16 KiB of staged queries: every head at G·head_dim ≤ 4096

cudaError_t bounds_launch(attn::Elem e, const Args& a, cudaStream_t stream);

}  // namespace attnbench::cuda::quest
