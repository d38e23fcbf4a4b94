// mha — exact multi-head attention, one KV head per query head.
// Catalog: A-MHA. Paper: Vaswani et al. 2017, Attention Is All You Need.
// Math and layout: attention_common.h (PRIM-ATTN). The baseline of mqa and gqa.
#include "attention_spec.h"

namespace attnbench::attention {
namespace {

class Mha final : public AttentionSpec {
 public:
  Mha()
      : AttentionSpec({.name = "mha",
                       .summary = "exact multi-head attention, one KV head per query head",
                       .catalog_id = "A-MHA",
                       .paper = "Vaswani et al. 2017, Attention Is All You Need",
                       .spec_version = 1},
                      HeadSharing::per_head) {}
};

}  // namespace
}  // namespace attnbench::attention

ATTNBENCH_METHOD(attnbench::attention::Mha);
