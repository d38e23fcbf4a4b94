// The attention stage on CUDA, prepared from its parameters rather than from a case: what the
// attention methods' impls (attention_cuda.cpp) and mla's (mla_cuda.cpp, over its workspaces)
// share — the kernel choice per variant, the limits it is checked against, the KV split count,
// the split partials' workspace and the launches. Host C++ only. The kernels do not rotate: with
// the fused rope's parameters the stage first runs rope's own kernel (rope.cu) into rotated copies
// of q and k, rounded to the storage dtype, which every variant then reads.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "attention_launch.h"
#include "rope_launch.h"
#include "attnbench/allocator.h"
#include "attnbench/dtype.h"
#include "attnbench/impl.h"
#include "reference/attention/attention_common.h"

namespace attnbench::cuda {

class CudaBackend;

// The variants: tensor cores (f16/bf16; key and value widths that are multiples of 8 up to 256, or
// MLA's absorbed 576/512 with V inside K's rows; every pattern but cog's signed weights, head_sparse
// included) or CUDA cores (every dtype, any head_dim and v_head_dim up to 1024, every pattern).
enum class AttentionVariant { mma, general };

// The device buffers of one attention step (attention_launch.h's Params has their layouts).
struct AttentionBuffers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;  // may be k (v_stride = head_dim: MLA's absorbed form)
  const int32_t* kv_len = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
  const float* alibi_slopes = nullptr;  // with s.alibi
  const float* row_gates = nullptr;     // with s.head_sparse: [batch, q_heads, q_len] f32
  const int32_t* key_idx = nullptr;     // with s.key_index: the index lists (kv_len: their lengths)
  const float* key_bias = nullptr;      // with s.key_bias: a logit bias per key row
  const int32_t* tree_mask = nullptr;   // with s.tree_mask: the tree's mask rows
  // With s.rope_dim: the rope's inputs (attention_common.h).
  const int32_t* q_positions = nullptr;
  const int32_t* k_positions = nullptr;
  const float* inv_freq = nullptr;
};

// The stage's buffers for a case of an attention method (mha ... cog, moh, gather_decode, whose
// list lengths idx_len are the stage's kv_len, bias_decode, tree_decode): the case's own tensors.
AttentionBuffers case_buffers(const attention::AttentionParams& s, const IoBuffers& io, const float* row_gates = nullptr);
// The fused rope's inputs (q_positions, k_positions, inv_freq) from a case's buffers, with s.rope_dim.
void add_rope_buffers(AttentionBuffers& b, const attention::AttentionParams& s, const IoBuffers& io);

class AttentionStage {
 public:
  // Whether `variant` takes the step; the reason when not. `decode` picks decode_mma over
  // prefill_mma (the general kernel serves both phases).
  static Support supports(AttentionVariant variant, const attention::AttentionParams& s, DType dtype, bool decode,
                          const DeviceLimits& limits);

  // Binds the kernel and the buffers, sets the kernel's shared-memory limit and allocates the
  // split partials (named `name`.split_o / .split_lse) and, with head_sparse, the row map
  // (`name`.row_map / .row_count). Only for a step supports() took.
  void prepare(AttentionVariant variant, const attention::AttentionParams& s, DType dtype, bool decode, CudaBackend& be,
               const AttentionBuffers& buffers, const std::string& name = "attention");

  // Enqueues rope's kernel for q and for k with the rope parameters, map_rows with head_sparse, the kernel, and split_combine when the keys are split, on
  // `stream`.
  void enqueue(cudaStream_t stream) const;

  // The arithmetic path the kernel's flops run on ("": fp32 FFMA).
  std::string compute_ceiling() const { return ceiling_; }

 private:
  using Configure = cudaError_t (*)(int*);
  using Launch = cudaError_t (*)(const attn::Params&, int, cudaStream_t);
  using RowsLaunch = cudaError_t (*)(const attn::Params&, cudaStream_t);  // a pass over the rows, of the dtype
  Launch launch_ = nullptr;
  RowsLaunch map_rows_ = nullptr, split_combine_ = nullptr;
  attn::Params params_{};
  int row_blocks_ = 1;
  std::string ceiling_;
  BufferPtr part_o_, part_lse_, row_map_, row_count_, q_rot_, k_rot_;
  attn::Elem elem_ = attn::Elem::f32;
  rope_kernel::Args rope_q_{}, rope_k_{};
};

}  // namespace attnbench::cuda
