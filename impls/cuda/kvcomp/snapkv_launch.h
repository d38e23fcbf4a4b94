// The interface between snapkv on CUDA (snapkv_cuda.cpp, host C++) and its kernels
// (snapkv_logits.cuh, instantiated per element type in the build folder, and snapkv_cuda.cu).
// Light on purpose: no JSON, no attnbench headers.
//
// Per sequence b and KV head g (bg = b·kv_heads + g), the G query heads of g and the w window
// queries form GW = G·w packed rows, head-major: row r is query i = r % w of head g·G + r / w, so
// the group's rows are contiguous in q_obs (from row bg·GW) and a head's rows are consecutive.
// Workspaces, all f32:
//   part_m, part_l [splits][B·Hq·w]  per key split: each row's max logit and Σ exp(logit − max)
//   row_m, row_inv_l [B·Hq·w]       each row's softmax max and 1 / sum over all its visible keys
//   a      [B·Hq][P]                 the window's mean softmax of every prefix key (step 1)
//   score  [B·Hkv][P]                pooled (step 2), averaged over the group (step 3)
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention/attention_launch.h"  // Elem

namespace attnbench::cuda::snapkv {

using attn::Elem;

enum class Pool { max, avg };

struct Params {
  const void* q_obs;  // [B, Hq, w, d]   Elem
  const void* k;      // [B, Hkv, T, d]  Elem
  const void* v;      // [B, Hkv, T, d]  Elem
  int32_t* kept_idx;  // [B, Hkv, budget]
  int32_t* kept_len;  // [B, Hkv]
  void* k_kept;       // [B, Hkv, budget, d]  Elem
  void* v_kept;
  float *part_m, *part_l, *row_m, *row_inv_l, *a, *score;  // workspaces (null when not scoring)
  int batch, q_heads, kv_heads, group, head_dim;
  int kv_len;      // T
  int obs_window;  // w
  int prefix;      // P = T − w (0 when everything is kept)
  int budget;
  int top_k;       // budget − w prefix tokens kept by score (0 when everything is kept)
  int kept;        // min(budget, T)
  bool keep_all;
  Pool pool;
  int pool_radius;  // (pool_kernel − 1) / 2
  int elem_bytes;
  int splits;       // key splits of the statistics pass
  float scale;      // 1/sqrt(head_dim)
};

// The tiled logits kernels (snapkv_logits.cuh): fp32 dot products on CUDA cores, 256 threads, a
// tile of kRowsPerBlock packed rows × kKeysPerTile keys, head_dim streamed kDimsPerStage at a time.
//   stats:  grid B·Hkv × splits; each CTA covers all GW rows of its group against its split of the
//           key tiles, with an online max and sum per row (causal: window query i sees keys
//           j ≤ P + i), and writes part_m / part_l.
//   scores: grid B·Hkv × ⌈P / kKeysPerTile⌉; each CTA takes one tile of prefix keys (visible to
//           every window query) against all GW rows: a = (1/w)·Σ_i exp(logit − m_i) / l_i.
inline constexpr int kLogitsThreads = 256;
inline constexpr int kRowsPerBlock = 64;
inline constexpr int kKeysPerTile = 128;
inline constexpr int kDimsPerStage = 16;
inline constexpr int kMaxSplits = 256;
// Shared memory: two stages of the Q and K chunks (f32), then the stats kernel's cross-warp row
// statistics or the scores kernel's P tile.
inline constexpr size_t kPipeBytes = 2 * kDimsPerStage * (kRowsPerBlock + kKeysPerTile) * sizeof(float);
inline constexpr size_t kStatsSmem = kPipeBytes + 2 * kRowsPerBlock * sizeof(float);
inline constexpr size_t kScoresSmem = kPipeBytes + kRowsPerBlock * kKeysPerTile * sizeof(float);

template <Elem E>
cudaError_t logits_configure(int* stats_ctas_per_sm, int* scores_ctas_per_sm);
template <Elem E>
cudaError_t stats_launch(const Params& p, cudaStream_t stream);
template <Elem E>
cudaError_t scores_launch(const Params& p, cudaStream_t stream);

// snapkv_cuda.cu:
//   combine  part_m/part_l over the splits -> row_m, row_inv_l (one thread per row)
//   pool     a -> score: max/avg pooling of each head (in-range elements only), mean over the group
//   select   per (b, g), one CTA: radix select of the top_k prefix scores (larger first, then
//            smaller index), kept indices ascending, then the window; −1 beyond kept; kept_len
//   gather   k_kept/v_kept rows from k/v at kept_idx, zeros beyond kept (bit-exact copies)
inline constexpr int kCombineThreads = 256;
inline constexpr int kPoolThreads = 256;       // prefix keys per pool CTA
inline constexpr int kSelectThreads = 1024;
inline constexpr int kSelectCachedKeys = 11264;  // prefixes up to this keep their keys in shared memory (44 KiB)
inline constexpr int kGatherRows = 8;          // kept rows per gather CTA (a warp each)
cudaError_t combine_launch(const Params& p, cudaStream_t stream);
cudaError_t pool_launch(const Params& p, cudaStream_t stream);
cudaError_t select_launch(const Params& p, cudaStream_t stream);
cudaError_t gather_launch(const Params& p, cudaStream_t stream);

}  // namespace attnbench::cuda::snapkv
