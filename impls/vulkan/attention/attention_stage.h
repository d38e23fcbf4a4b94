// The attention stage on Vulkan: a planned attention (attention_plan.h) with its buffers bound,
// prepared from the plan of an AttentionParams, so the attention methods and the methods that
// compute attention as one of their steps (mla, moh) run the same code. prepare() builds the
// pipelines (cached by the backend), allocates the split partials (and with head_sparse the row
// map) and binds the buffers once; run() records one dispatch, preceded by the row map pass with
// head_sparse and followed by the merge of split partials when the plan splits the keys. With the
// fused rope's parameters the kernels do not rotate: rope's own shader (rope.comp) first writes
// rotated copies of q and k, rounded to the storage dtype, which the kernels then read — the
// standalone path attention_common.h allows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "attention_plan.h"
#include "attnbench/backend.h"
#include "attnbench/impl.h"
#include "reference/attention/rope_common.h"

namespace attnbench::vulkan {

class VulkanBackend;
class BoundPipeline;

namespace attn {

// The variants of the kernels a stage may be planned with (attention_plan.h).
enum class Variant { portable, coopmat_nv };
Plan plan_variant(Variant v, const attention::AttentionParams& s, DType dtype, const DeviceLimits& limits,
                  const std::string& phase);

// The tensors of attention_common.h. v may be k itself (v_stride = head_dim); alibi_slopes is
// read only with s.alibi, row_gates only with s.head_sparse, key_idx only with s.key_index (kv_len
// then holds the lists' lengths), key_bias only with s.key_bias.
struct Buffers {
  const Buffer *q = nullptr, *k = nullptr, *v = nullptr, *kv_len = nullptr, *o = nullptr, *lse = nullptr;
  const Buffer* alibi_slopes = nullptr;
  const Buffer* row_gates = nullptr;
  // With s.rope_dim: the rope's inputs (attention_common.h).
  const Buffer *q_positions = nullptr, *k_positions = nullptr, *inv_freq = nullptr;
  const Buffer *key_idx = nullptr, *key_bias = nullptr;
  const Buffer* tree_mask = nullptr;  // with s.tree_mask
};

// The stage's buffers for a case of an attention method (mha ... cog, gather_decode, bias_decode,
// tree_decode, moh): the case's own tensors, gather_decode's lists' lengths (idx_len) as kv_len.
Buffers case_buffers(const attention::AttentionParams& s, const IoBuffers& io, const Buffer* row_gates = nullptr);
// The fused rope's inputs (q_positions, k_positions, inv_freq) from a case's buffers, with s.rope_dim.
void add_rope_buffers(Buffers& b, const attention::AttentionParams& s, const IoBuffers& io);

class Stage {
 public:
  Stage();
  ~Stage();
  void prepare(VulkanBackend& be, const Plan& plan, DType dtype, const Buffers& io);
  void run();

 private:
  void prepare_rope(DType dtype, Buffers& io);

  VulkanBackend* be_ = nullptr;
  Plan plan_;
  BufferPtr part_ml_, part_o_, row_map_, row_count_, q_rot_, k_rot_;
  std::unique_ptr<BoundPipeline> row_map_pass_, main_, merge_, rope_q_, rope_k_;
  rope::RopeParams rope_q_push_{}, rope_k_push_{};
  uint32_t groups_ = 0;  // batch · kv_heads
};

}  // namespace attn
}  // namespace attnbench::vulkan
