// tree_decode — the target model's attention over a draft tree: n tree tokens per sequence attend
// to the verified prefix and to their own ancestors, the step a tree verifier (EAGLE-2, SpecInfer,
// Medusa) runs before tree_verify reads the logits. Catalog: PRIM-ATTN-TREE (the second half of
// PRIM-TREE; tree_mask builds the mask this consumes). Math and layout: attention_common.h
// (tree_mask): GQA attention of q_len = nodes queries over kv_len = prefix + nodes keys, query i
// seeing every prefix key and tree key t (at cache slot prefix + t) iff bit t of its mask row is
// set, i.e. t is i or an ancestor of i. Measured against gqa's causal attention of the same
// queries over the same cache (decode up to 64 queries, prefill beyond).
//
// Parameters: batch, q_heads, kv_heads, head_dim, nodes (the step's queries), prefix (keys before
// the tree), max_depth and shape (the tree: random, chain or star, as tree_mask draws them, stream
// "parents"), ragged, softcap and the fused rope.
//
// Choices, and where they differ from what runs the same step elsewhere:
// - The mask is tree_mask's `mask` output as it is: i32 [batch, nodes, ceil(nodes/32)], bit t%32
//   of word t/32 (EAGLE-2's tree_mask as bits). FlashInfer's custom_mask covers every (query, key)
//   pair — packed little-endian into bytes over qo_len × kv_len, the prefix's columns included;
//   this mask covers the tree's columns only, since a tree verifier's prefix is always visible, so
//   it is the same n × n bits per sequence whatever the prefix. The kernels read a bit only inside
//   a row's causal span (a parent precedes its children, so the tree's visibility is a subset of
//   the bottom-right causal mask).
// - Queries are in the tree's creation order, each at the cache slot prefix + i of its own key, as
//   EAGLE-2 appends the tree tokens to the cache before the verify forward; the accepted path is
//   compacted after verification (tree_verify), not here.
// - Positions: with the fused rope (rope_layout), each tree query and key is rotated at
//   prefix + depth (tree_mask's position_ids), the prefix's keys at their slots; rope_positions
//   must be contiguous. Without it the inputs are taken as already rotated. ALiBi is refused: its
//   bias counts cache slots, and a tree token's distance is its depth.
// - ragged varies the prefix (sequence 0 has `prefix`, the others a seeded prefix in [0, prefix]);
//   every sequence holds a whole tree. Its baseline, gqa with ragged, draws its own lengths: the
//   same shape of work, not the same lengths.
// - A chain is causal attention (gqa with q_len = nodes, kv_len = prefix + nodes), bit for bit on
//   each backend (a test); a star leaves each node the prefix, the root and itself.
// - K and V are NaN past each sequence's length, so a kernel that reads a key it does not see fails.
#include "attention_spec.h"

namespace attnbench::attention {
namespace {

class TreeDecode final : public AttentionSpec {
 public:
  TreeDecode()
      : AttentionSpec({.name = "tree_decode",
                       .summary = "attention of a draft tree's tokens over a prefix and their ancestors (a tree verifier's step)",
                       .catalog_id = "PRIM-ATTN-TREE",
                       .paper = "Li et al. 2024, EAGLE-2: Faster Inference of Language Models with Dynamic Draft Trees; "
                                "Miao et al. 2024, SpecInfer (tree-based parallel decoding)",
                       .spec_version = 1},
                      HeadSharing::grouped, Pattern::tree) {}
};

}  // namespace
}  // namespace attnbench::attention

ATTNBENCH_METHOD(attnbench::attention::TreeDecode);
