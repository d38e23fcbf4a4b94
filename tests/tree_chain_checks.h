// What every backend's tests of tree_verify check beside the shared cases: a chain is a tree, so
// tree_verify's stochastic modes on a chain of K drafts (max_depth = nodes − 1 = K) equal
// speculative_sampling with draft_len K: the same inputs are generated (checked here), and each
// backend's outputs must be the same bytes (tokens, emitted, accepted length).
#pragma once

#include <string>
#include <vector>

#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/registry.h"
#include "support.h"

namespace attnbench::test {

// (tree_verify parameters, speculative_sampling parameters, seed): batches and distribution mode,
// a one-draft chain, Llama-3's vocabulary, drafts equal, independent and disjoint.
struct ChainPair {
  std::string tree, spec;
  uint64_t seed;
};
inline const std::vector<ChainPair> kTreeChainPairs = {
    {"batch=4,nodes=5,max_depth=4,vocab=32000,shape=chain", "batch=4,draft_len=4,vocab=32000", 1},
    {"batch=3,nodes=2,max_depth=1,vocab=2,shape=chain,dist=peaked", "batch=3,draft_len=1,vocab=2,dist=peaked", 2},
    {"batch=2,nodes=7,max_depth=6,vocab=128256,shape=chain,dist=flat,draft=independent",
     "batch=2,draft_len=6,vocab=128256,dist=flat,draft=independent", 3},
    {"batch=4,nodes=4,max_depth=3,vocab=1000,shape=chain,dist=bimodal,draft=disjoint",
     "batch=4,draft_len=3,vocab=1000,dist=bimodal,draft=disjoint", 4},
    {"batch=4,nodes=4,max_depth=3,vocab=1000,shape=chain,dist=ties,draft=equal", "batch=4,draft_len=3,vocab=1000,dist=ties,draft=equal", 5},
    {"batch=1,nodes=4,max_depth=3,vocab=16,shape=chain,draws=5000", "batch=1,draft_len=3,vocab=16,draws=5000", 6},
};

// The mismatches between the two methods on `backend` ("" entries never; empty: equal).
inline std::vector<std::string> tree_chain_mismatches(Backend& backend) {
  std::vector<std::string> bad;
  const auto same = [&](const std::string& what, const HostTensor& a, int64_t a_stride, int64_t a_first, const HostTensor& b,
                        int64_t b_stride, int64_t b_first, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        if (a.get(r * a_stride + a_first + k) != b.get(r * b_stride + b_first + k)) {
          bad.push_back(cat(what, " row ", r, " column ", k, ": ", a.get(r * a_stride + a_first + k), " vs ",
                            b.get(r * b_stride + b_first + k)));
          return;
        }
  };
  for (const std::string mode : {"rejection", "rejection_wor"})
    for (const ChainPair& pair : kTreeChainPairs) {
      const Case tree = method_case("tree_verify", pair.tree + ",mode=" + mode, "f32", pair.seed);
      const Case spec = method_case("speculative_sampling", pair.spec, "f32", pair.seed);
      TensorMap tin = registry().method("tree_verify").inputs(tree);
      TensorMap sin = registry().method("speculative_sampling").inputs(spec);
      const int64_t K = spec.i64("draft_len"), V = spec.i64("vocab"), P = sin.at("target_probs").shape()[0];
      const int64_t R = sin.at("draft_token_ids").shape()[0];
      const std::string at = cat(tree.id(), ": ");
      same(at + "target_probs", tin.at("target_probs"), 0, 0, sin.at("target_probs"), 0, 0, 1, P * (K + 1) * V);
      same(at + "draft_probs", tin.at("draft_probs"), (K + 1) * V, 0, sin.at("draft_probs"), K * V, 0, P, K * V);
      same(at + "draft tokens", tin.at("tokens"), K + 1, 1, sin.at("draft_token_ids"), K, 0, R, K);
      const RowResult t = check_with_inputs(tree, std::move(tin), backend, "paths");
      const RowResult s = check_with_inputs(spec, std::move(sin), backend, "race");
      if (t.record.status != Status::pass || s.record.status != Status::pass) {
        bad.push_back(at + "did not pass: " + status_and_reason(t) + " / " + status_and_reason(s));
        continue;
      }
      same(at + "tokens", t.outputs.at("tokens_out"), K + 1, 0, s.outputs.at("tokens"), K + 1, 0, R, K + 1);
      same(at + "emitted", t.outputs.at("emitted"), 1, 0, s.outputs.at("emitted"), 1, 0, R, 1);
      same(at + "accepted length", t.outputs.at("accept_len"), 1, 0, s.outputs.at("emitted_draft_token_num"), 1, 0, R, 1);
    }
  return bad;
}

}  // namespace attnbench::test
