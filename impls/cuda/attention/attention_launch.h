// The interface between the CUDA attention impls (attention_cuda.cpp, host C++) and the kernels
// (*.cuh, instantiated one per .cu file in the build folder from attention/instances.cmake).
// Light on purpose: no JSON, no attnbench headers beyond the method's parameter struct, so nvcc's
// device passes parse little.
//
// Rows are packed per KV head (GQA packing): the G = q_heads / kv_heads query heads that share
// KV head g and the q_len queries form R = G·q_len rows, query-major,
//     packed row r  ->  query i = r / G,  head h = g·G + r % G,
// so one CTA reads each K/V tile once for all of them, and a block of consecutive rows covers a
// contiguous range of queries (what causal skipping needs). With head_sparse (attention_common.h)
// a KV head's task rows are the positions of its row map instead: its active packed rows, still
// ascending, so a block of consecutive positions still covers ascending queries.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "reference/attention/attention_common.h"

namespace attnbench::cuda::attn {

enum class Elem { f32, f16, bf16 };

struct Params {
  attention::AttentionParams s;
  const void* q;          // [batch, q_heads, q_len, head_dim]      Elem
  const void* k;          // [batch, kv_heads, kv_cap, head_dim]    Elem, NaN beyond the row's length
  const void* v;          // [batch, kv_heads, kv_cap, v_head_dim], rows s.v_stride apart (may be k)
                          // (cache_cap rows for kv_cap with s.key_index)
  const int32_t* kv_len;  // [batch], or [batch, kv_heads] with s.head_lengths
  void* o;                // [batch, q_heads, q_len, v_head_dim]    Elem
  float* lse;             // [batch, q_heads, q_len]                natural log
  const float* alibi_slopes;  // [q_heads] f32 with s.alibi, else null
  // With s.key_index, else null: the index lists [batch, 1 or kv_heads, kv_cap] i32 whose lengths
  // kv_len holds; K and V then have s.cache_cap rows per (sequence, KV head) (attention::key_row).
  const int32_t* key_idx;
  const float* key_bias;  // with s.key_bias, else null: one f32 per row of K (key_row's index)
  const int32_t* tree_mask;  // with s.tree_mask, else null: [batch, q_len, words] (attention::tree_row)
  // Split-KV partials ([splits][rows][v_head_dim] and [splits][rows], rows = batch·q_heads·q_len,
  // row index as LSE's); null when splits == 1 and the kernel writes O and LSE itself.
  float* part_o;
  float* part_lse;
  float scale_log2;  // s.scale·log2(e): softmax in base 2, exp2(s·scale_log2 − m·scale_log2)
  int splits;        // KV splits per (batch, KV head, row block); 1 = no split
  // With s.head_sparse, else null: the row gates [batch, q_heads, q_len] f32, and the stage's row
  // map [batch·kv_heads][group·q_len] and active-row counts [batch·kv_heads] that map_rows writes.
  const float* row_gates;
  int32_t* row_map;
  int32_t* row_count;
};

// What a kernel family needs from the host before a launch: its CTA shape and shared memory.
struct LaunchShape {
  int rows_per_cta;      // packed rows per CTA
  int threads;
  size_t smem_bytes;     // dynamic shared memory
  int min_keys_per_split;  // a split shorter than this wastes the CTA
};

// Each family is a function template over (element type, tile width) with explicit instantiations
// in the build folder; `configure` sets the kernel's shared-memory limit (once, in prepare) and
// reports how many of its CTAs fit on one SM; `launch` enqueues it. Both return the CUDA error
// instead of throwing.
//
// prefill_mma: tensor cores (mma.sync m16n8k16, f32 accumulation), f16/bf16, tile width D in
// {64, 128, 256}: head_dim and v_head_dim multiples of 8 up to D, any v_stride (a multiple of 8),
// head_sparse; every pattern but cog's signed weights.
template <Elem E, int D>
LaunchShape prefill_mma_shape();
template <Elem E, int D>
cudaError_t prefill_mma_configure(int* ctas_per_sm);
template <Elem E, int D>
cudaError_t prefill_mma_launch(const Params& p, cudaStream_t stream);

// decode_mma: split-KV (flash-decoding) on tensor cores; MT = 16-row MMA tiles per CTA (1 or 2);
// the widths and patterns of prefill_mma.
template <Elem E, int D, int MT>
LaunchShape decode_mma_shape();
template <Elem E, int D, int MT>
cudaError_t decode_mma_configure(int* ctas_per_sm);
template <Elem E, int D, int MT>
cudaError_t decode_mma_launch(const Params& p, int row_blocks, cudaStream_t stream);

// latent_mma: MLA's absorbed attention on tensor cores, both phases, split-KV: head_dim up to 576,
// v_head_dim up to 512 read inside K's rows (v = k, v_stride = head_dim); causal masking only.
template <Elem E>
LaunchShape latent_mma_shape();
template <Elem E>
cudaError_t latent_mma_configure(int* ctas_per_sm);
template <Elem E>
cudaError_t latent_mma_launch(const Params& p, int row_blocks, cudaStream_t stream);

// general: CUDA cores, any element type, head_dim and v_head_dim ≤ DMAX (64, 128, 256, 512 or
// 1024), any width and v_stride, split-KV or not; every pattern, cog's signed weights included.
template <Elem E, int DMAX>
LaunchShape general_shape();
template <Elem E, int DMAX>
cudaError_t general_configure(int* ctas_per_sm);
template <Elem E, int DMAX>
cudaError_t general_launch(const Params& p, int row_blocks, cudaStream_t stream);

// Merges the split partials into O and LSE (one warp per row).
template <Elem E>
cudaError_t split_combine_launch(const Params& p, cudaStream_t stream);

// head_sparse's first pass: each KV head's active rows into its row map, in packed order, and the
// skipped rows' O = 0, LSE = −inf (one CTA per (batch, KV head)).
template <Elem E>
cudaError_t map_rows_launch(const Params& p, cudaStream_t stream);

// Largest number of splits the partial buffers and the combine kernel accept.
inline constexpr int kMaxSplits = 128;

}  // namespace attnbench::cuda::attn
