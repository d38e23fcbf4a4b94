// mqa — multi-query attention, every query head reads one shared KV head.
// Catalog: A-MQA. Paper: Shazeer 2019, Fast Transformer Decoding: One Write-Head is All You Need.
// Math and layout: attention_common.h (PRIM-ATTN) with kv_heads = 1; measured against mha.
#include "attention_spec.h"

namespace attnbench::attention {
namespace {

class Mqa final : public AttentionSpec {
 public:
  Mqa()
      : AttentionSpec({.name = "mqa",
                       .summary = "multi-query attention, every query head reads one shared KV head",
                       .catalog_id = "A-MQA",
                       .paper = "Shazeer 2019, Fast Transformer Decoding: One Write-Head is All You Need",
                       .spec_version = 1},
                      HeadSharing::single) {}
};

}  // namespace
}  // namespace attnbench::attention

ATTNBENCH_METHOD(attnbench::attention::Mqa);
