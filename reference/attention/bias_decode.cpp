// bias_decode — decode attention with an additive bias per key: ZeroMerge's compensation
// λ·log w_j of merged slots, and any per-key logit offset a KV method carries beside its cache.
// Catalog: PRIM-ATTN with a per-key log-weight bias. Math and layout: attention_common.h
// (key_bias): logit_j = scale·q·k_j (soft-capped when asked, ALiBi added when asked) + bias[b, g, j],
// then the usual softmax and P·V, with GQA head sharing. Measured against gqa decode over the same
// cache without the bias.
//
// Choices:
// - The bias is f32 [batch, kv_heads, kv_len], one per key of a KV head (ZeroMerge keeps a weight
//   per slot of each head's cache), added after the soft-cap, as ALiBi is: the compensation is a
//   weight on the softmax, not part of the score being capped.
// - The method takes the bias, not the weights: a scale λ or the log is the caller's (ZeroMerge's
//   impl forms λ·log w once per step). The inputs draw what a merged cache carries: log w with
//   w = 1 for three keys in four and a merged slot of 2 to 64 tokens otherwise; NaN past a row's
//   length, so a kernel that adds the bias of a key it does not see fails.
// - Every other attention parameter composes (ragged and per-head lengths, GQA, soft-cap, ALiBi,
//   q_len up to 64 for a speculative step).
#include "attention_spec.h"

namespace attnbench::attention {
namespace {

class BiasDecode final : public AttentionSpec {
 public:
  BiasDecode()
      : AttentionSpec({.name = "bias_decode",
                       .summary = "decode attention with an additive logit bias per key (ZeroMerge's log-weight compensation)",
                       .catalog_id = "PRIM-ATTN-BIAS",
                       .paper = "Liu et al. 2025, ZeroMerge: Parameter-Free KV Cache Compression for Memory-Efficient Long-Context LLMs",
                       .spec_version = 1},
                      HeadSharing::grouped, Pattern::key_bias) {}
};

}  // namespace
}  // namespace attnbench::attention

ATTNBENCH_METHOD(attnbench::attention::BiasDecode);
