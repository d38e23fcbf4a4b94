// gqa — grouped-query attention, q_heads/kv_heads query heads share each KV head.
// Catalog: A-GQA. Paper: Ainslie et al. 2023, GQA: Training Generalized Multi-Query Transformer Models.
// Math and layout: attention_common.h (PRIM-ATTN) with g(h) = floor(h·kv_heads/q_heads); measured against mha.
#include "attention_spec.h"

namespace attnbench::attention {
namespace {

class Gqa final : public AttentionSpec {
 public:
  Gqa()
      : AttentionSpec({.name = "gqa",
                       .summary = "grouped-query attention, q_heads/kv_heads query heads share each KV head",
                       .catalog_id = "A-GQA",
                       .paper = "Ainslie et al. 2023, GQA: Training Generalized Multi-Query Transformer Models",
                       .spec_version = 1},
                      HeadSharing::grouped) {}
};

}  // namespace
}  // namespace attnbench::attention

ATTNBENCH_METHOD(attnbench::attention::Gqa);
