// swa — sliding-window attention with optional sink tokens: each query sees the last `window` keys
// up to its own and the first `sinks` keys of its sequence.
// Catalog: A-SWA. Paper: Beltagy et al. 2020, Longformer (the causal sliding window as Mistral 7B
// and Gemma 2 use it); sinks: Xiao et al. 2024, Efficient Streaming Language Models with Attention
// Sinks. Math and layout: attention_common.h (PRIM-ATTN with the window and sinks fields), GQA
// head sharing; measured against gqa over the same cache (full causal attention).
//
// Choices, and where they differ from the libraries that run the same pattern:
// - The window counts the query's own key: query position p sees keys (p − window, p]. This is
//   HF transformers' sliding_window for Mistral and Gemma 2; FlashAttention and FlashInfer take
//   window_size_left = window − 1 for the same mask.
// - Bottom-right aligned with the causal mask (decode and prefill alike), so a decode step's
//   query at position kv_len − 1 sees keys [kv_len − window, kv_len).
// - Sinks are key positions [0, sinks) kept visible below the window, the StreamingLLM pattern.
//   gpt-oss's "sinks" are something else: a learned per-head logit added to the softmax's
//   denominator with no value; that is not this parameter.
// - A window needs the causal mask (a non-causal window would be two-sided, another method).
// - window ≥ kv_len is plain causal attention: the tests check it bit for bit against gqa.
// - The cache holds every key (kv_len of them); that a rolling buffer of window + sinks would do
//   is what the KV-bytes column reports, not a layout this kernel reads.
#include "attention_spec.h"

namespace attnbench::attention {
namespace {

class Swa final : public AttentionSpec {
 public:
  Swa()
      : AttentionSpec({.name = "swa",
                       .summary = "sliding-window attention with optional sink tokens (Mistral, Gemma 2, StreamingLLM)",
                       .catalog_id = "A-SWA",
                       .paper = "Beltagy et al. 2020, Longformer; Xiao et al. 2024, Efficient Streaming Language Models with Attention Sinks",
                       .spec_version = 1},
                      HeadSharing::grouped, Pattern::sliding) {}
};

}  // namespace
}  // namespace attnbench::attention

ATTNBENCH_METHOD(attnbench::attention::Swa);
