// Shared definition of moh (catalog A-MOH): mixture-of-head attention, where each token runs its
// shared heads and the top routed_k of its routed heads, and each head's output is scaled by the
// token's gate for it. moh.cpp's header records each choice.
//
// Heads 0..shared_heads−1 are shared (always run), heads shared_heads..heads−1 routed. Two routers:
//   norm     (MoH-LLaMA3, no weights) the score of routed head h is ‖q_h‖₂ of the token's query;
//            the top routed_k run; every running head's gate is 1.
//   learned  (MoH's ViT/DiT/LLM router) logits ℓ = W·x_t from the token's hidden state x_t, with
//            W [heads + 2, d_model]: row h the logit of head h (W_s's rows, then W_r's), rows
//            heads, heads + 1 the balance logits (W_0). The score of a routed head is its logit.
//              p = softmax(ℓ over the routed heads), kept the top routed_k,
//              γ_h = α_r·routed_k·p_h / Σ_kept p          (routed, kept; 0 for the others)
//              γ_h = α_s·shared_heads·softmax_h(ℓ over the shared heads)   (shared)
//              [α_s, α_r] = 2·softmax(ℓ_heads, ℓ_heads+1); α = 1 when either kind is absent.
// Ties: a routed head is kept when fewer than routed_k routed heads score higher or score the
// same at a lower index.
//
// Inputs (canonical layouts, case dtype): gqa's q, k, v, kv_len (attention_common.h); learned
// also x [batch, q_len, d_model] and w_router [heads + 2, d_model].
// Outputs:
//   O          [batch, heads, q_len, head_dim]  γ·attention of each running head; 0 for the others
//   LSE        [batch, heads, q_len] f32        the running heads' LSE; −inf for the others
//   gates      [batch, heads, q_len] f32        γ (0 for a head that does not run)
//   heads_idx  [batch, q_len, shared_heads + routed_k] i32   the heads each token runs, ascending
//
// The stages on every backend: (learned) the router logits as a projection with an f32 output
// (projection_common.h), the router below (per token: scores, selection, gates, heads_idx), then
// the attention stage with head_sparse (attention_common.h), which skips every row of gate 0.
//
// Light on purpose: CUDA device code includes it and the Vulkan shader reads the field list.
#ifndef ATTNBENCH_MOH_COMMON_H
#define ATTNBENCH_MOH_COMMON_H

#define ATTNBENCH_ROUTER_FIELDS(X)                                          \
  X(i32, batch)                                                             \
  X(i32, heads)                                                             \
  X(i32, q_len)                                                             \
  X(i32, head_dim)                                                          \
  X(i32, shared_heads)                                                      \
  X(i32, routed_k)                                                          \
  X(i32, learned)      /* 1: gates from logits [batch·q_len][heads + 2] */ \
  X(i32, logit_row)    /* heads + 2: f32 elements per token's logits */

#ifdef __cplusplus
#include <cstdint>

#include "attention_common.h"
#include "attnbench/param_struct.h"
#include "projection_common.h"

namespace attnbench {
struct Case;
}

namespace attnbench::moh {

ATTNBENCH_PARAM_STRUCT(RouterParams, ATTNBENCH_ROUTER_FIELDS);

// Heads a token runs, the capacity of heads_idx's last axis.
ATTNBENCH_HD inline int32_t active_heads(const RouterParams& r) { return r.shared_heads + r.routed_k; }

// A case's stages: router_logits (learned only: x·W_routerᵀ into logits [batch·q_len][heads + 2]
// f32), router, attention (gqa's parameters with head_sparse).
struct MohStages {
  RouterParams router{};
  projection::ProjectionParams router_logits{};
  attention::AttentionParams attention{};
  int64_t logit_elements = 0;  // f32 workspace of the learned router's logits
};

MohStages moh_stages(const Case& c);

}  // namespace attnbench::moh
#endif  // __cplusplus
#endif
