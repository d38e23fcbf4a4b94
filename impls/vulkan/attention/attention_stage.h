// The attention stage on Vulkan: a planned attention (attention_plan.h) with its buffers bound,
// prepared from the plan of an AttentionParams, so the attention methods and the methods that
// compute attention as one of their steps (mla) run the same code. prepare() builds the
// pipelines (cached by the backend), allocates the split partials and binds the buffers once;
// run() records one dispatch, plus the merge of split partials when the plan splits the keys.
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
// read only with s.alibi.
struct Buffers {
  const Buffer *q = nullptr, *k = nullptr, *v = nullptr, *kv_len = nullptr, *o = nullptr, *lse = nullptr;
  const Buffer* alibi_slopes = nullptr;
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
  BufferPtr part_ml_, part_o_;
  std::unique_ptr<BoundPipeline> main_, merge_;
  uint32_t merge_push_[2] = {0, 0};
};

}  // namespace attn
}  // namespace attnbench::vulkan
