// cog — Cog attention: signed attention weights, sign(s)·softmax(|s|), so a head can subtract what
// it attends to as well as add it.
// Catalog: A-COG. Paper: Lv et al. 2024, More Expressive Attention with Negative Weights (Cog
// Attention). Math and layout: attention_common.h (PRIM-ATTN with signed_weights); GQA head
// sharing; measured against gqa (softmax attention) over the same inputs.
//
// Choices, checked against the authors' code (trestad/CogAttn, Cogformer/attention.py,
// CogAttention.forward):
// - w_j = sign(s_j)·exp(|s_j|)/Σ_k exp(|s_k|) over the visible keys, sign(0) = 0 (torch.sign),
//   s = (q/√d)·k (the authors scale q first; the same logit up to rounding); masked keys are
//   −inf in |s|, so they weigh 0. Stable form: |s| − max|s| in the exponent; the online softmax
//   keeps the running max and sum of |s|, the weights carry the sign into P·V.
// - The authors use one KV head per query head; kv_heads < q_heads is the same formula with GQA's
//   head sharing (kv_heads = q_heads gives theirs).
// - LSE is the log-sum-exp of |s| (the softmax's normaliser); the authors return the weights.
// - The paper keeps softmax attention in the first and last layers: a model-level choice, not
//   this kernel's. softcap and alibi compose (they modify s before |·|).
#include "attention_spec.h"

namespace attnbench::attention {
namespace {

class Cog final : public AttentionSpec {
 public:
  Cog()
      : AttentionSpec({.name = "cog",
                       .summary = "Cog attention: signed weights sign(s)·softmax(|s|)",
                       .catalog_id = "A-COG",
                       .paper = "Lv et al. 2024, More Expressive Attention with Negative Weights",
                       .spec_version = 1},
                      HeadSharing::grouped, Pattern::signed_weights) {}
};

}  // namespace
}  // namespace attnbench::attention

ATTNBENCH_METHOD(attnbench::attention::Cog);
