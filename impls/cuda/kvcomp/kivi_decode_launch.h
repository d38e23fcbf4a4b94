// The interface between kivi_decode on CUDA (kivi_decode_cuda.cpp, host C++) and its kernels: the
// fused decode kernel (kivi_decode.cuh, instantiated per element type and code width in the build
// folder from kvcomp/instances.cmake) and the split combine (kivi_decode.cu). Light on purpose: no
// JSON, no attnbench headers beyond the method's parameter struct.
//
// Query rows: KV head g of sequence b serves the GQA group's query heads g·group .. g·group +
// group − 1; they are cut into row_blocks blocks of `rows` consecutive heads (all of them when the
// group has at most kMaxRows), and a CTA takes one block. The kernel's row tile ROWS (1, 2, 4 or 8)
// is the smallest that holds `rows`; the rows past the block's are zero and never written.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention/attention_launch.h"  // Elem
#include "reference/kvcomp/kivi_common.h"

namespace attnbench::cuda::kivi {

using attn::Elem;

inline constexpr int kWarps = 4;  // warps of a decode CTA
inline constexpr int kThreads = 32 * kWarps;
inline constexpr int kMaxRows = 8;       // query rows of a CTA (4 when head_dim > 128: max_rows)
inline constexpr int kMaxHeadDim = 256;  // the value phase gives each lane 8 channels of a row
inline constexpr int kMaxSplits = 64;
inline constexpr int kCombineThreads = 128;

// The score phase's keys per lane for a row tile of `rows`: P consecutive keys, so that the lane's
// ROWS·P scores are 32 registers (P between 4 and 16: at most a group of G ≥ 16 keys). Per channel
// the lane's codes are P·bits bits of one 32-bit word, or two words (4 bits, P = 16). A warp walks
// the keys a tile of 32·P at a time; splits are cut in whole tiles.
ATTNBENCH_HD constexpr int keys_per_lane(int rows) { return rows <= 2 ? 16 : rows <= 4 ? 8 : 4; }
ATTNBENCH_HD constexpr int warp_tile(int rows) { return 32 * keys_per_lane(rows); }
// The most query rows of a block: the value phase covers a token's row with D/8 lanes per 4 rows
// (8 channels × 4 rows each), within a warp.
ATTNBENCH_HD constexpr int max_rows(int head_dim) { return head_dim <= 128 ? kMaxRows : 4; }
// The row tile of a kernel for a block of `rows` query rows.
ATTNBENCH_HD constexpr int row_tile(int rows) { return rows <= 1 ? 1 : rows <= 2 ? 2 : rows <= 4 ? 4 : 8; }

struct Args {
  kvcomp::KiviParams s;
  const void* q;             // [batch, q_heads, 1, head_dim]                   Elem
  const uint32_t* k_codes;   // [batch, kv_heads, head_dim, k_quant_cap / per_word]
  const void* k_scale;       // [batch, kv_heads, head_dim, k_quant_cap / G]   Elem
  const void* k_min;
  const void* k_full;        // [batch, kv_heads, R, head_dim]                  Elem
  const uint32_t* v_codes;   // [batch, kv_heads, v_quant_cap, head_dim / per_word]
  const void* v_scale;       // [batch, kv_heads, v_quant_cap, head_dim / G]   Elem
  const void* v_min;
  const void* v_full;        // [batch, kv_heads, R + 1, head_dim]              Elem
  const int32_t* kv_len;     // [batch]
  void* o;                   // [batch, q_heads, 1, head_dim]                   Elem
  float* lse;                // [batch, q_heads, 1]
  // With splits > 1, each split's partial per query row (row index as LSE's): its max logit and
  // sum of exp(logit − max) over its keys, and Σ exp(logit − max)·v unnormalised; null otherwise.
  float* part_ml;            // [batch·q_heads, splits, 2]
  float* part_o;             // [batch·q_heads, splits, head_dim]
  int rows;                  // query rows of a block (≤ the row tile)
  int row_blocks;            // blocks per KV head: ⌈group / rows⌉
  int splits;                // key splits per (sequence, KV head, block), 1..kMaxSplits
};

// The decode kernel of element type E and BITS-bit codes for the row tile row_tile(a.rows):
// `configure` reports how many of its CTAs fit on an SM (once, in prepare), `launch` enqueues the
// grid (row_blocks·splits, kv_heads, batch). Both return the CUDA error instead of throwing.
template <Elem E, int BITS>
cudaError_t decode_configure(int rows, int* ctas_per_sm);
template <Elem E, int BITS>
cudaError_t decode_launch(const Args& a, cudaStream_t stream);

// With splits > 1: O and LSE from the partials, one CTA per query row.
cudaError_t combine_launch(Elem e, const Args& a, cudaStream_t stream);

}  // namespace attnbench::cuda::kivi
