// tree_mask — a draft tree's attention mask, depths, position ids and retrieve paths from its
// parent pointers: what a tree verifier (tree_verify, EAGLE-2, Medusa) builds before the target's
// forward over the tree tokens. Catalog: PRIM-TREE. Interface after EAGLE-2's topK_genrate
// (tree_mask, tree_position_ids, retrieve_indices), which FlashInfer's and SGLang's tree builders
// also produce.
//
// Semantics (spec_version 1), phase "build". Row b holds a tree of n nodes in creation order:
// parents[b, 0] = −1 (the root: the last verified token), parents[b, i] ∈ [0, i) for i ≥ 1, so a
// parent precedes its children. With anc(i) = {i} ∪ anc(parents[i]):
//   mask[b, i, w]         bit j%32 of word w = j/32 set iff j ∈ anc(i) (a node sees its ancestors
//                         and itself); words past n are 0
//   depth[b, i]           |anc(i)| − 1 (the root 0)
//   position_ids[b, i]    prefix + depth[b, i]
//   n_leaves[b]           nodes with no child
//   retrieve[b, l, t]     for the l-th leaf in ascending node index, its path root first:
//                         retrieve[b, l, depth(leaf) − s] = the s-th ancestor of the leaf; −1 past
//                         the path and in every row l ≥ n_leaves[b]
// All EXACT. A verifier reads the candidate paths from retrieve (tree_verify: ties between paths
// go to the lowest l).
//
// Inputs: parents [batch, nodes] i32 by `shape` (stream "parents", uniform n = b·nodes + i):
//   random   parent ⌊u·i⌋, or that node's nearest ancestor above depth max_depth − 1 (a random
//            recursive tree, depth capped)
//   chain    parent i − 1 (a tree with one path: chain drafting), needs nodes − 1 ≤ max_depth
//   star     parent 0 (every draft at depth 1: Medusa's first head alone)
//
// Choices, and where they differ from the code they come from:
//   - EAGLE-2 sorts retrieve_indices lexicographically (root-first, −1 last) after building them in
//     leaf-index order; the rows here stay in leaf-index order, which is creation order: a builder
//     that emits nodes by score (eagle2_tree) gets its best paths first without the sort.
//   - EAGLE-2's mask is a float [1, 1, n, n] tensor and its retrieve tensor has exactly
//     max(depth) + 1 columns and n_leaves rows; here the mask is bits and the retrieve rows have
//     the case's capacity (max_depth + 1 columns, n rows), ragged by n_leaves, so every backend
//     writes a fixed shape.
//   - SGLang's build_tree_kernel_efficient returns next-token and next-sibling links instead of
//     paths; the paths are the form a batched verifier gathers with.
#include <algorithm>

#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/thread_pool.h"
#include "tree_build.h"
#include "tree_common.h"
#include "tree_gen.h"

namespace attnbench::decoding {

TreeParams tree_params(const Case& c) {
  TreeParams p{};
  p.batch = static_cast<int32_t>(c.i64("batch"));
  p.nodes = static_cast<int32_t>(c.i64("nodes"));
  p.prefix = static_cast<int32_t>(c.i64("prefix"));
  p.max_depth = static_cast<int32_t>(c.i64("max_depth"));
  p.mask_words = (p.nodes + 31) / 32;
  return p;
}

namespace {

class TreeMask final : public Method {
 public:
  TreeMask() {
    schema_.add({"batch", ParamType::Int, Value(int64_t{4}), {}, 1.0, 65536.0, {}, "trees (one per sequence)"});
    schema_.add({"nodes", ParamType::Int, Value(int64_t{64}), {}, 1.0, 4096.0, {}, "n: tree tokens per row, the root included"});
    schema_.add({"prefix", ParamType::Int, Value(int64_t{1024}), {}, 0.0, 1e8, {}, "tokens before the tree: the root's position id"});
    schema_.add({"max_depth", ParamType::Int, Value(int64_t{8}), {}, 1.0, 4095.0, {},
                 "D: the deepest node's depth (retrieve rows hold D + 1 entries)"});
    add_tree_shape(schema_, "random: a random recursive tree capped at depth D; chain: one path; star: every node a child of the root");
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const TreeParams p = tree_params(c);
    const int64_t B = p.batch, n = p.nodes;
    OutputDecl mask{"mask", DType::i32, {B, n, p.mask_words}, CheckClass::EXACT};
    mask.doc = "mask [batch, nodes, ceil(nodes/32)]: bit j of row i set iff node j is i or an ancestor of i";
    mask.packed_bits = true;
    OutputDecl depth{"depth", DType::i32, {B, n}, CheckClass::EXACT};
    depth.doc = "depth [batch, nodes]: edges from the root";
    OutputDecl pos{"position_ids", DType::i32, {B, n}, CheckClass::EXACT};
    pos.doc = "position_ids [batch, nodes]: prefix + depth";
    OutputDecl leaves{"n_leaves", DType::i32, {B}, CheckClass::EXACT};
    leaves.doc = "n_leaves [batch]: nodes without a child";
    OutputDecl retrieve{"retrieve", DType::i32, {B, n, p.max_depth + 1}, CheckClass::EXACT, "n_leaves", 1, -1.0};
    retrieve.doc = "retrieve [batch, nodes, max_depth+1]: each leaf's path root first, leaves in node order; -1 past a path";
    return {mask, depth, pos, leaves, retrieve};
  }

  TensorMap inputs(const Case& c) const override {
    const TreeParams p = tree_params(c);
    HostTensor parents("parents", DType::i32, {p.batch, p.nodes});
    for (int64_t b = 0; b < p.batch; ++b) {
      const std::vector<int32_t> par = tree_parents(c.str("shape"), p.nodes, p.max_depth, c.seed, b);
      for (int64_t i = 0; i < p.nodes; ++i) parents.set(b * p.nodes + i, par[i]);
    }
    TensorMap in;
    in.emplace("parents", std::move(parents));
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const TreeParams p = tree_params(c);
    const int64_t B = p.batch, n = p.nodes, W = p.mask_words, L = p.max_depth + 1;
    Reference ref;
    HostTensor mask("mask", DType::i32, {B, n, W}), depth("depth", DType::i32, {B, n}), pos("position_ids", DType::i32, {B, n});
    HostTensor leaves("n_leaves", DType::i32, {B}), retrieve("retrieve", DType::i32, {B, n, L});
    retrieve.fill(-1.0);
    const HostTensor& parents = in.at("parents");
    // tree_build.h's layout, the definition every tree-producing method shares.
    harness_pool().parallel_for(B, [&](int64_t begin, int64_t end) {
      std::vector<int32_t> par(n);
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t i = 0; i < n; ++i) par[i] = static_cast<int32_t>(parents.get(b * n + i));
        const TreeLayout t = tree_layout(par, p.prefix, p.max_depth);
        for (int64_t k = 0; k < n * W; ++k) mask.set(b * n * W + k, static_cast<double>(static_cast<int32_t>(t.mask[k])));
        for (int64_t i = 0; i < n; ++i) {
          depth.set(b * n + i, t.depth[i]);
          pos.set(b * n + i, t.position_ids[i]);
        }
        leaves.set(b, static_cast<double>(t.leaves));
        for (int64_t k = 0; k < n * L; ++k) retrieve.set(b * n * L + k, t.retrieve[k]);
      }
    });
    ref.tensors.emplace("mask", std::move(mask));
    ref.tensors.emplace("depth", std::move(depth));
    ref.tensors.emplace("position_ids", std::move(pos));
    ref.tensors.emplace("n_leaves", std::move(leaves));
    ref.tensors.emplace("retrieve", std::move(retrieve));
    return ref;
  }

  Work work(const Case& c) const override {
    const TreeParams p = tree_params(c);
    const double Bn = double{1.0} * p.batch * p.nodes;
    Work w;
    // The parents read; mask, depths, position ids, the leaf counts and the retrieve capacity written.
    w.bytes = 4 * Bn + 4 * Bn * p.mask_words + 8 * Bn + 4.0 * p.batch + 4 * Bn * (p.max_depth + 1);
    w.bound = Bound::copy;
    return w;
  }

  Json quality(const Case& c, const TensorMap&, const TensorMap& out) const override {
    const TreeParams p = tree_params(c);
    return tree_shape_figures(out, p.batch, p.nodes);
  }

 private:
  MethodInfo info_{.name = "tree_mask",
                   .family = "decoding",
                   .summary = "a draft tree's attention mask, depths, position ids and retrieve paths from parent pointers",
                   .catalog_id = "PRIM-TREE",
                   .paper = "Li et al. 2024, EAGLE-2 (dynamic draft trees); Miao et al. 2024, SpecInfer (tree attention)",
                   .spec_version = 1,
                   .phases = {"build"},
                   .dtypes = {DType::i32}};
  ParamSchema schema_;
};

}  // namespace
}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::TreeMask);
