// The attention stage on Vulkan: a planned attention (attention_plan.h) with its buffers bound,
// prepared from the plan of an AttentionParams, so the attention methods and the methods that
// compute attention as one of their steps (mla, moh) run the same code. prepare() builds the
// pipelines (cached by the backend), allocates the split partials (and with head_sparse the row
// map) and binds the buffers once; run() records one dispatch, preceded by the row map pass with
// head_sparse and followed by the merge of split partials when the plan splits the keys.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "attention_plan.h"
#include "attnbench/backend.h"

namespace attnbench::vulkan {

class VulkanBackend;
class BoundPipeline;

namespace attn {

// The variants of the kernels a stage may be planned with (attention_plan.h).
enum class Variant { portable, coopmat_nv };
Plan plan_variant(Variant v, const attention::AttentionParams& s, DType dtype, const DeviceLimits& limits,
                  const std::string& phase);

// The tensors of attention_common.h. v may be k itself (v_stride = head_dim); alibi_slopes is
// read only with s.alibi, row_gates only with s.head_sparse.
struct Buffers {
  const Buffer *q = nullptr, *k = nullptr, *v = nullptr, *kv_len = nullptr, *o = nullptr, *lse = nullptr;
  const Buffer* alibi_slopes = nullptr;
  const Buffer* row_gates = nullptr;
};

class Stage {
 public:
  Stage();
  ~Stage();
  void prepare(VulkanBackend& be, const Plan& plan, DType dtype, const Buffers& io);
  void run();

 private:
  VulkanBackend* be_ = nullptr;
  Plan plan_;
  BufferPtr part_ml_, part_o_, row_map_, row_count_;
  std::unique_ptr<BoundPipeline> row_map_pass_, main_, merge_;
  uint32_t groups_ = 0;  // batch · kv_heads
};

}  // namespace attn
}  // namespace attnbench::vulkan
