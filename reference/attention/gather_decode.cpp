// gather_decode — a decode step over a listed subset of the cache: the sparse step of the
// selection-only KV methods (LessIsMore, TokenSelect, Quest), which keep every key and read the
// ones a selection lists.
// Catalog: PRIM-ATTN-GATHER. Math and layout: attention_common.h (key_index): one query per
// sequence attends, with GQA head sharing, the keys of its list — idx[b, (g or 0), t] for t below
// the list's length — exactly as attention over a cache holding only those keys would. Measured
// against gqa decode over the whole cache, on the same backend.
//
// Choices, and where they differ from what runs the same step elsewhere:
// - The lists are positions in the cache, i32 [batch, 1 or kv_heads, budget], with their lengths
//   idx_len [batch] or [batch, kv_heads]: one list per sequence for every KV head (index_scope
//   shared: LessIsMore's unified set, TokenSelect's voted set) or one per KV head (per_head:
//   Quest's pages, per-head top-k). FlashInfer's sparse decode takes pages (a BSR layout) rather
//   than tokens; token lists are what these methods select, and a page of P tokens is P entries.
// - One query per sequence (q_len 1): the mask counts list positions, so a causal multi-token step
//   over a list would be another primitive.
// - The list may be in any order and the kernels do not sort it; the inputs draw ascending lists
//   (what a sorted selection emits), and every key outside a row's list is NaN, as is the padding
//   past a list's length, so a kernel that reads anything else fails.
// - ragged: the lists' lengths vary (list 0 has budget, the others a seeded count in [0, budget];
//   an empty list gives O = 0 and LSE = −inf); the cache is always full, kv_len keys.
// - No ALiBi and no fused rope: both need a key's place in the cache, and the cache a selection
//   reads holds keys already rotated. softcap is taken.
// - quality reports kv_cache_bytes (the whole cache: selection saves no memory) beside
//   kv_bytes_read_per_step, the K and V bytes one step reads.
#include "attention_spec.h"

namespace attnbench::attention {
namespace {

class GatherDecode final : public AttentionSpec {
 public:
  GatherDecode()
      : AttentionSpec({.name = "gather_decode",
                       .summary = "decode attention over a listed subset of the cache, shared or per KV head (the sparse step of selection-only KV methods)",
                       .catalog_id = "PRIM-ATTN-GATHER",
                       .paper = "Tang et al. 2024, Quest; Yang et al. 2025, TidalDecode (the gathered step)",
                       .spec_version = 1},
                      HeadSharing::grouped, Pattern::gathered) {}
};

}  // namespace
}  // namespace attnbench::attention

ATTNBENCH_METHOD(attnbench::attention::GatherDecode);
