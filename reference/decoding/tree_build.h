// A draft tree's layout from its parent pointers (tree_mask.cpp's semantics): the mask bits, depths,
// position ids, leaf count and retrieve paths of one tree. The one definition for every method that
// outputs a tree (tree_mask, eagle2_tree), so their references cannot drift apart.
#pragma once

#include <cstdint>
#include <vector>

#include "attnbench/json.h"
#include "attnbench/tensor.h"

namespace attnbench::decoding {

struct TreeLayout {
  std::vector<uint32_t> mask;      // [n, ceil(n/32)]: bit j of row i set iff j is i or an ancestor of i
  std::vector<int32_t> depth;      // [n]
  std::vector<int32_t> position_ids;  // [n]: prefix + depth
  std::vector<int32_t> retrieve;   // [n, max_depth + 1]: the leaves' root-first paths, −1 past them
  int64_t leaves = 0;
};

// `parents`: n entries in creation order, parents[0] = −1, parents[i] ∈ [0, i) (asserted).
TreeLayout tree_layout(const std::vector<int32_t>& parents, int64_t prefix, int64_t max_depth);

// The quality figures every tree output shares, from outputs n_leaves [batch] and depth
// [batch, nodes]: tree_size, leaves_mean, depth_max.
Json tree_shape_figures(const TensorMap& out, int64_t batch, int64_t nodes);

}  // namespace attnbench::decoding
