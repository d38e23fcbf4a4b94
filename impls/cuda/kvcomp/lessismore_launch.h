// The interface between lessismore on CUDA (lessismore_cuda.cpp) and its kernels (lessismore.cu).
// Light on purpose: no JSON, no attnbench headers beyond the family's and the method's light ones.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention/attention_launch.h"  // Elem
#include "reference/kvcomp/lessismore_common.h"

namespace attnbench::cuda::lessismore {

// The scorer's four steps (reference/kvcomp/lessismore_common.h), into the family's scores:
//   logits  a block of kThreads per (cache row b·kv_heads + g, block of kThreads / lanes
//           candidates); `lanes` consecutive threads (a power of two ≤ 32) share a candidate's key,
//           dealt its 16-byte words (or, when a row is not whole words, its elements) in turn. The
//           group's queries are staged in shared memory as fp32, stage_heads at a time, each thread
//           keeping a sum per staged head; a key's lanes add theirs by warp shuffles in a fixed
//           order. The g = 0 blocks set their candidates' merged keys to INT_MAX.
//   top k   the family's select kernel (kv_stages.h) over the logits, per query head
//   ranks   the bitonic passes: local ones in blocks of kSortThreads over tiles of ≤ kSortTile
//           (key, index) pairs in shared memory, global steps one thread per compare-exchange;
//           the last pass takes atomicMin(merged[b, j], rank·q_heads + h)
//   scores  one thread per candidate of each sequence: −merged, or −(k + 1)·q_heads
struct Args {
  kvcomp::SelectionParams sel;  // the case's
  const void* q;                // [batch·q_heads, head_dim]: the decode queries
  const void* k;                // [batch·kv_heads, kv_len, head_dim]
  float* logits;                // [batch·q_heads, candidates]
  int32_t *top, *top_len;       // [batch·q_heads, top_k], [batch·q_heads]: the select's output
  float* sort_key;              // [batch·q_heads, width] when width > kSortTile (else unused)
  int32_t* sort_idx;
  int32_t* merged;              // [batch, candidates]
  float* scores;                // [batch, candidates]: the family's score buffer
  int lanes;
  int stage_heads;              // query heads staged at a time (≤ kStageHeads, ≤ kQueryFloats / head_dim)
  int blocks;                   // candidate blocks per cache row: the logits grid is rows·blocks
};

inline constexpr int kThreads = 256;
inline constexpr int kQueryFloats = 4096;  // 16 KiB of staged queries
inline constexpr int kStageHeads = 8;      // sums per thread
inline constexpr int kSortThreads = 1024;
inline constexpr int kSortTile = 4096;     // 32 KiB of pairs

// Every step on `stream`, the family's select among them.
cudaError_t score_launch(attn::Elem e, const Args& a, cudaStream_t stream);

}  // namespace attnbench::cuda::lessismore
