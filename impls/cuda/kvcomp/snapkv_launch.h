// The interface between the SnapKV scorer on CUDA (snapkv_scorer_cuda.h, host C++) and its scoring
// kernels (snapkv_logits.cuh, instantiated per element type in the build folder, and snapkv.cu).
// Light on purpose: no JSON, no attnbench headers beyond the scorer's parameter structs.
//
// Per sequence b and KV head g (bg = b·kv_heads + g), the G query heads of g and the w window
// queries form GW = G·w packed rows, head-major: row r is query i = r % w of head g·G + r / w, so
// the group's rows are contiguous in q_obs (from row bg·GW) and a head's rows are consecutive.
// Workspaces, all f32:
//   part_m, part_l [splits][B·Hq·w]  per key split: each row's max logit and Σ exp(logit − max)
//   row_m, row_inv_l [B·Hq·w]       each row's softmax max and 1 / sum over all its visible keys
//                                    (with candidate_softmax: its visible candidates), the latter
//                                    times the window query's decay weight γ^(w−1−i)
//                                    (kvcomp::snapkv_query_weight; 1 without log_decay)
//   a      [B·Hq][C]                 the window's mean softmax of every candidate (step 1; column
//                                    j is token sinks + j), which the family's pooling stage turns
//                                    into the scores (kv_stages.h)
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention/attention_launch.h"  // Elem
#include "reference/kvcomp/snapkv_common.h"

namespace attnbench::cuda::snapkv {

using attn::Elem;

struct Params {
  kvcomp::SelectionParams sel;  // the family's: the candidates C are tokens [sinks, sinks + C)
  kvcomp::SnapkvParams m;
  const void* q_obs;  // [B, Hq, w, d]   Elem (a selection-only step's q: w = 1)
  const void* k;      // [B, Hkv, T, d]  Elem
  float *part_m, *part_l, *row_m, *row_inv_l, *a;  // workspaces
  int splits;         // key splits of the statistics pass
};

// The tiled logits kernels (snapkv_logits.cuh): fp32 dot products on CUDA cores, 256 threads, a
// tile of kRowsPerBlock packed rows × kKeysPerTile keys, head_dim streamed kDimsPerStage at a time.
//   stats:  grid B·Hkv × splits; each CTA covers all GW rows of its group against its split of the
//           key tiles (of stats_keys() keys from stats_first()), with an online max and sum per row
//           (causal: window query i sees keys j < T − w + i + 1, kvcomp::snapkv_visible_end), and
//           writes part_m / part_l.
//   scores: grid B·Hkv × ⌈C / kKeysPerTile⌉; each CTA takes one tile of candidates against all
//           GW rows: a = (1/w)·Σ_i exp(logit − m_i)·(γ^(w−1−i) / l_i) over the queries that see
//           the key (the weight folded into row_inv_l by combine).
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

// The keys of each window query's softmax, [stats_first, stats_first + stats_keys): every key, or
// with candidate_softmax the candidates alone.
ATTNBENCH_HD inline int stats_first(const kvcomp::SelectionParams& s, const kvcomp::SnapkvParams& m) {
  return m.candidate_softmax ? s.sinks : 0;
}
ATTNBENCH_HD inline int stats_keys(const kvcomp::SelectionParams& s, const kvcomp::SnapkvParams& m) {
  return m.candidate_softmax ? s.candidates : s.kv_len;
}

template <Elem E>
cudaError_t logits_configure(int* stats_ctas_per_sm, int* scores_ctas_per_sm);
template <Elem E>
cudaError_t stats_launch(const Params& p, cudaStream_t stream);
template <Elem E>
cudaError_t scores_launch(const Params& p, cudaStream_t stream);

// snapkv.cu: combine part_m/part_l over the splits -> row_m, row_inv_l = weight / l (one thread
// per row).
inline constexpr int kCombineThreads = 256;
cudaError_t combine_launch(const Params& p, cudaStream_t stream);

}  // namespace attnbench::cuda::snapkv
