// How the Vulkan attention kernels are shaped for a case on a device: which shader, its
// specialization constants (tile sizes chosen from the device's limits), the grid, the KV
// splits. Pure functions of the case's shape and the DeviceLimits that supports() receives, so
// supports() and prepare() agree by construction.
//
// Kernels (impls/vulkan/shaders):
//   attention_decode       few rows per KV head: split-KV (flash-decoding), RB rows per workgroup
//   attention_prefill      many rows: Q, K, V tiles in shared memory, register-blocked S and O
//   attention_prefill_coopmat_nv   many rows, f16: S and O on NVIDIA cooperative matrices
//   attention_merge        combines split partials when a case runs with more than one split
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/dtype.h"
#include "reference/attention/attention_common.h"

namespace attnbench::vulkan::attn {

// The push-constant block of attention_common.glsl, member for member.
struct Push {
  uint32_t batch, q_heads, kv_heads, group, q_len, kv_cap;
  uint32_t rows, row_blocks, splits, split_len, causal, groups;
  float scale;
};

struct Plan {
  std::string unsupported;      // non-empty: this kernel cannot run the case here, and why
  std::string shader;
  std::vector<uint32_t> spec;   // spec[0] is the workgroup size
  Push push{};
  uint32_t partial_stride = 0;  // floats per partial O row (the kernel's padded head_dim)
  uint64_t shared_bytes = 0;
  std::string describe() const;  // "attention_prefill BR=32 BC=16 ... splits=1"
};

// The portable variant: the split-KV kernel for few rows per KV head (or when no tile fits),
// else the tiled kernel.
Plan plan_portable(const attention::Shape& s, DType dtype, const DeviceLimits& limits);
// The coopmat_nv variant (f16 prefill on VK_NV_cooperative_matrix).
Plan plan_coopmat_nv(const attention::Shape& s, DType dtype, const DeviceLimits& limits, const std::string& phase);

// Bytes of the split partials a plan needs: (m, l) pairs and unnormalised O rows.
uint64_t partial_ml_bytes(const attention::Shape& s, const Plan& p);
uint64_t partial_o_bytes(const attention::Shape& s, const Plan& p);

}  // namespace attnbench::vulkan::attn
