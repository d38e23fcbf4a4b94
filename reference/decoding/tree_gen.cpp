#include "tree_gen.h"

#include <algorithm>

#include "attnbench/error.h"
#include "attnbench/rng.h"

namespace attnbench::decoding {

void add_tree_shape(ParamSchema& schema, const std::string& doc) {
  schema.add({"shape", ParamType::String, Value(std::string("random")), {}, {}, {}, {"random", "chain", "star"}, doc});
  schema.rule("chain: nodes - 1 <= max_depth", [](const Params& p, const std::string&) -> std::string {
    if (p.str("shape") != "chain" || p.i64("nodes") - 1 <= p.i64("max_depth")) return {};
    return cat("a chain of ", p.i64("nodes"), " nodes is ", p.i64("nodes") - 1, " deep, beyond max_depth=", p.i64("max_depth"));
  });
}

std::vector<int32_t> tree_parents(const std::string& shape, int64_t nodes, int64_t max_depth, uint64_t seed, int64_t b) {
  const PhiloxStream draws(seed, "parents", kDomainInputs);
  std::vector<int32_t> par(static_cast<size_t>(nodes)), depth(static_cast<size_t>(nodes));
  for (int64_t i = 0; i < nodes; ++i) {
    int64_t q = -1;
    if (i > 0 && shape == "chain") q = i - 1;
    else if (i > 0 && shape == "star") q = 0;
    else if (i > 0) {
      q = std::min<int64_t>(i - 1, static_cast<int64_t>(draws.uniform_f64(static_cast<uint64_t>(b * nodes + i)) * static_cast<double>(i)));
      while (depth[q] >= max_depth) q = par[q];
    }
    par[i] = static_cast<int32_t>(q);
    depth[i] = q < 0 ? 0 : depth[q] + 1;
  }
  return par;
}

int64_t tree_leaf_paths(const std::vector<int32_t>& parents, int64_t max_depth, std::vector<int32_t>& paths) {
  const int64_t n = static_cast<int64_t>(parents.size()), L = max_depth + 1;
  std::vector<char> has_child(static_cast<size_t>(n), 0);
  for (int64_t i = 1; i < n; ++i) has_child[parents[i]] = 1;
  int64_t leaves = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (has_child[i]) continue;
    std::vector<int32_t> path;
    for (int64_t j = i; j >= 0; j = parents[j]) path.push_back(static_cast<int32_t>(j));
    ATTNBENCH_ASSERT(static_cast<int64_t>(path.size()) <= L, "a path of ", path.size(), " nodes beyond max_depth ", max_depth);
    std::reverse(path.begin(), path.end());
    path.resize(static_cast<size_t>(L), -1);
    paths.insert(paths.end(), path.begin(), path.end());
    ++leaves;
  }
  return leaves;
}

}  // namespace attnbench::decoding
