#include "tree_build.h"

#include <algorithm>

#include "attnbench/error.h"
#include "tree_gen.h"

namespace attnbench::decoding {

TreeLayout tree_layout(const std::vector<int32_t>& par, int64_t prefix, int64_t max_depth) {
  const int64_t n = static_cast<int64_t>(par.size()), W = (n + 31) / 32, L = max_depth + 1;
  TreeLayout t;
  t.mask.assign(static_cast<size_t>(n * W), 0u);
  t.depth.assign(static_cast<size_t>(n), 0);
  t.position_ids.assign(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i)
    ATTNBENCH_ASSERT(i == 0 ? par[i] == -1 : (par[i] >= 0 && par[i] < i), "tree: parent of node ", i, " is ", par[i]);
  // Straight from the definitions: each node's ancestor set by walking its parents; the leaves'
  // paths by tree_gen.h's walk, the one a verifier's inputs are made by.
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = -1;
    for (int64_t j = i; j >= 0; j = par[j]) {
      t.mask[i * W + j / 32] |= 1u << (j % 32);
      ++d;
    }
    t.depth[i] = static_cast<int32_t>(d);
    t.position_ids[i] = static_cast<int32_t>(prefix + d);
  }
  t.leaves = tree_leaf_paths(par, max_depth, t.retrieve);
  t.retrieve.resize(static_cast<size_t>(n * L), -1);
  return t;
}

Json tree_shape_figures(const TensorMap& out, int64_t batch, int64_t nodes) {
  double leaves = 0, deepest = 0;
  for (int64_t b = 0; b < batch; ++b) {
    leaves += out.at("n_leaves").get(b);
    for (int64_t i = 0; i < nodes; ++i) deepest = std::max(deepest, out.at("depth").get(b * nodes + i));
  }
  return {{"tree_size", nodes}, {"leaves_mean", leaves / static_cast<double>(batch)}, {"depth_max", deepest}};
}

}  // namespace attnbench::decoding
