// How the Vulkan attention kernels are shaped for a case on a device: which shader, its
// specialization constants (tile sizes chosen from the device's limits), the grid, the KV
// splits. Pure functions of the case's shape and the DeviceLimits that supports() receives, so
// supports() and prepare() agree by construction. V and O rows are v_head_dim wide and V's rows
// v_stride apart (attention_common.h): the portable kernels take any such layout, the
// cooperative-matrix kernel only V as wide as K. Head-sparse attention (attention_common.h) runs
// on the portable kernels, after attention_row_map has compacted each group's active rows, and so
// do gathered keys, key bias and tree masks (key_index, key_bias, tree_mask: gather_decode,
// bias_decode, tree_decode), whose splits and tiles count list positions; coopmat_nv refuses the four.
//
// Kernels (impls/vulkan/shaders):
//   attention_decode       few rows per KV head: split-KV (flash-decoding), RB rows per workgroup
//   attention_prefill      many rows: Q, K, V tiles in shared memory, register-blocked S and O
//   attention_prefill_coopmat_nv   many rows, f16: S and O on NVIDIA cooperative matrices
//   attention_merge        combines split partials when a case runs with more than one split
//   attention_row_map      with head_sparse, first: each (batch, KV head)'s active rows, compacted
// The plan fields are read by glslc too (attention_common.glsl): ASCII list, C++ inside __cplusplus.
#ifndef ATTNBENCH_VULKAN_ATTENTION_PLAN_H
#define ATTNBENCH_VULKAN_ATTENTION_PLAN_H

#define ATTNBENCH_VK_ATTENTION_PLAN(X)                                                   \
  X(u32, rows)       /* group * q_len: packed query rows per (batch, KV head) */         \
  X(u32, row_blocks) /* workgroups along the packed rows */                              \
  X(u32, splits)     /* KV splits; > 1 writes partials that attention_merge combines */  \
  X(u32, split_len)  /* keys per split */                                                \
  X(u32, groups)     /* workgroups launched */

#ifdef __cplusplus
#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/dtype.h"
#include "attnbench/param_struct.h"
#include "reference/attention/attention_common.h"

namespace attnbench::vulkan::attn {

ATTNBENCH_PARAM_STRUCT(AttentionPlan, ATTNBENCH_VK_ATTENTION_PLAN);

// The push-constant block of attention_common.glsl.
struct Push {
  attention::AttentionParams s;
  AttentionPlan plan;
};

struct Plan {
  std::string unsupported;      // non-empty: this kernel cannot run the case here, and why
  std::string shader;
  std::vector<uint32_t> constants;  // specialization constants; [0] is the workgroup size
  Push push{};
  uint32_t partial_stride = 0;  // floats per partial O row (the kernel's padded v_head_dim)
  uint64_t shared_bytes = 0;
};

// The portable variant: the split-KV kernel for few rows per KV head (or when no tile fits),
// else the tiled kernel.
Plan plan_portable(const attention::AttentionParams& s, DType dtype, const DeviceLimits& limits);
// The coopmat_nv variant (f16 prefill on VK_NV_cooperative_matrix).
Plan plan_coopmat_nv(const attention::AttentionParams& s, DType dtype, const DeviceLimits& limits, const std::string& phase);

// Bytes of the split partials a plan needs: (m, l) pairs and unnormalised O rows.
uint64_t partial_ml_bytes(const attention::AttentionParams& s, const Plan& p);
uint64_t partial_o_bytes(const attention::AttentionParams& s, const Plan& p);

}  // namespace attnbench::vulkan::attn
#endif  // __cplusplus
#endif
