// The interface between moh's host code (moh_cuda.cpp) and its router kernel (moh_router.cu;
// semantics: reference/attention/moh_common.h). Light on purpose.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "attention_launch.h"  // Elem
#include "reference/attention/moh_common.h"

namespace attnbench::cuda::moh_router {

struct Args {
  moh::RouterParams s;
  const void* q;        // [batch, heads, q_len, head_dim] Elem: the norm router's scores
  const float* logits;  // [batch·q_len][s.logit_row] f32 with s.learned, else null
  float* gates;         // [batch, heads, q_len]
  int32_t* heads_idx;   // [batch, q_len, active_heads(s)]
};

inline constexpr int kThreads = 256;

// One CTA per token; its dynamic shared memory holds a score and a kept flag per head, within
// what a launch may take without opting in to more (kMaxSmem).
inline constexpr size_t smem_bytes(const moh::RouterParams& s) { return static_cast<size_t>(s.heads) * 8; }
inline constexpr size_t kMaxSmem = 48 * 1024;

// Grid x = token: what a launch can address.
inline constexpr int64_t kMaxTokens = (int64_t{1} << 31) - 1;

cudaError_t route_launch(attn::Elem e, const Args& a, cudaStream_t stream);

}  // namespace attnbench::cuda::moh_router
