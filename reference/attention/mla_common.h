// Shared definition of mla (catalog A-MLA): DeepSeek-V2/V3's multi-head latent attention with the
// decoupled rotary key, in two algebraically equal forms. mla.cpp's header records each choice.
//
// Inputs (canonical layouts, case dtype but kv_len):
//   q          [batch, heads, q_len, nope + rope]   per head: q^C (nope dims), then q^R (rope
//                                                   dims, already rotated)
//   kv_latent  [batch, kv_cap, rank + rope]         per token: the latent c_t (rank dims), then the
//                                                   shared rotated key k^R_t; NaN beyond kv_len
//   w_uk       [heads, nope, rank]                  k^C_{h,t} = w_uk[h]·c_t   (kv_b_proj's K half)
//   w_uv       [heads, v_dim, rank]                 v_{h,t}   = w_uv[h]·c_t   (its V half)
//   kv_len     [batch] i32
// Outputs:
//   O          [batch, heads, q_len, v_dim]         Σ_t P_{h,t}·v_{h,t}
//   LSE        [batch, heads, q_len] f32            natural log of Σ_t exp(S_{h,t})
// with S_{h,t} = scale·(q^C_h·k^C_{h,t} + q^R_h·k^R_t), scale = 1/√(nope + rope), P = softmax_t S
// over the keys the bottom-right causal mask leaves (attention_common.h).
//
// The PreRoPE variant (rope_layout ≠ none; form naive, qk_rope_head_dim 0): no decoupled key, the
// latent rows are rank wide, q [batch, heads, q_len, nope] arrives unrotated, and
//   S_{h,t} = scale·R(p_i)q_h · R(p_t)(w_uk[h]·c_t)
// with the fused rope's inputs q_positions, k_positions and inv_freq (attention_common.h): the
// naive chain with the attention stage's rope on. The rotation depends on t, so w_uk cannot be
// folded into q: there is no absorbed form.
//
// The two forms, each a chain of shared stages (projection_common.h, then attention):
//   naive     K_h = [w_uk[h]·c ; k^R] (nope + rope wide) and V_h = w_uv[h]·c for every cached
//             token, then attention with head_dim nope + rope, v_head_dim v_dim, one KV head per
//             query head.
//   absorbed  q̃_h = [w_uk[h]ᵀ·q^C_h ; q^R_h] (rank + rope wide), then attention over the latent
//             cache as one KV head shared by every query head, key = the whole latent row,
//             value = its first rank dims (FlashMLA's decode): u_h [rank]; then O_h = w_uv[h]·u_h.
#ifndef ATTNBENCH_MLA_COMMON_H
#define ATTNBENCH_MLA_COMMON_H

#include <cstdint>

#include "attention_common.h"
#include "projection_common.h"

namespace attnbench {
struct Case;
}

namespace attnbench::mla {

struct MlaParams {
  int32_t batch, heads, q_len, kv_cap, causal;
  int32_t rank, rope, nope, v_dim;  // kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim
  bool absorbed;
  float scale;
  // The PreRoPE variant (rope_layout set; naive only, no decoupled key): the per-head keys are
  // rotated after decompression, as the attention stage's fused rope rotates them.
  int32_t rope_dim, rope_interleaved;
  float rope_factor;
};

MlaParams mla_params(const Case& c);

// The stages of a form, with their workspaces (elements of the case dtype):
//   naive:    decompress_k (latent → K), decompress_v (latent → V), attention (q, K, V → O, LSE)
//   absorbed: absorb_q (q → q̃), attention (q̃, latent, latent → u, LSE), project_out (u → O)
struct MlaStages {
  projection::ProjectionParams decompress_k{}, decompress_v{}, absorb_q{}, project_out{};
  attention::AttentionParams attention{};
  int64_t k_elements = 0, v_elements = 0;   // naive: K [batch, heads, kv_cap, nope + rope], V [.., v_dim]
  int64_t qa_elements = 0, u_elements = 0;  // absorbed: q̃ [batch, heads, q_len, rank + rope], u [.., rank]
};

MlaStages mla_stages(const MlaParams& s);

}  // namespace attnbench::mla
#endif
