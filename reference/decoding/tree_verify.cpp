// tree_verify — verification of a draft tree against the target's next-token distributions: greedy
// (the longest path whose every token is the target's argmax) and Medusa's typical acceptance.
// Catalog: C-TREEVERIFY (greedy and typical modes). Papers: Cai et al. 2024, Medusa (typical
// acceptance, evaluate_posterior); Miao et al. 2024, SpecInfer (tree verification); the greedy rule
// as EAGLE-2's evaluate_posterior applies it.
//
// Semantics (spec_version 1). Row b holds a tree of n nodes (node 0 the root, the last verified
// token) given as its leaves' root-first paths (tree_mask's retrieve and n_leaves, inputs here as a
// serving engine passes them), a token per node, and p_u = target_probs[b, u]: the target's
// distribution of the token after node u. For a path v_0 = root, v_1, ..., v_d, the draft v_t is
// accepted by its parent's distribution p = p_{v_{t−1}} when, with x = tokens[v_t]:
//   greedy   x = argmax p (the lowest index among equal maxima)
//   typical  p(x) > τ, τ = min(ε, δ·exp(−H(p))), H(p) = −Σ_y p(y)·ln p(y) (0·ln 0 = 0), ε and δ
//            as f32 values (Medusa's posterior_threshold and posterior_alpha)
// A path's accepted length is its longest accepted prefix. The chosen path has the longest; among
// equals, typical prefers the highest Σ ln p_{v_{t−1}}(x_t) over the accepted prefix, then either
// mode the lowest path index (retrieve row). Emitted: the accepted tokens, then the bonus token
// argmax p_{v_len} (lowest index), so emitted = accept_len + 1 ≤ max_depth + 1.
//
// Inputs: target_probs [batch, n, V] f32 from G-DIST (gdist.h) at slot b·n + u with shape `dist`;
// the tree from tree_gen.h by `shape` (retrieve [batch, n, max_depth + 1] i32, n_leaves [batch]);
// tokens [batch, n] i32: a child c of u drawn from q_u (G-DIST's `draft` relation next to p_u) by
// inverse CDF over the f64 q with earlier siblings' tokens removed (siblings distinct, as EAGLE's
// top-k children are; a node whose siblings exhausted q takes the lowest unused token), fp64
// uniform n = b·n + c of stream "tokens"; the root's token by the same uniform, ⌊u·V⌋ (never read).
//
// Outputs: tokens_out [batch, D+1] (accepted tokens, bonus; −1 past `emitted`), emitted [batch],
// accept_len [batch], best_path [batch] (the chosen retrieve row), accepted_nodes [batch, D+1] (the
// root and the accepted nodes; −1 past `emitted`). Greedy: EXACT (equal f32 values compare alike
// everywhere). Typical: SEMI; a row is a boundary event (check-only `boundary`) when a decision on
// some path's accepted prefix or at its first rejection has |p(x) − τ| within the fp32 error of τ
// (every backend rounds each p·ln p in fp32, ln to 2 ulp, and sums the terms in fp64, so τ's
// relative error is at most 8u·(1 + H), u = 2⁻²⁴, exp included), or when two different accepted
// prefixes of the longest length score within 8u·(len + 1)·max(1,
// |score|); such rows are excluded and counted.
//
// Choices, and where they differ from the code they come from:
//   - Medusa's evaluate_posterior computes τ from the softmax of logits at a temperature; here p is
//     the input (the temperature applied already). Its entropy is −Σ p·ln(p + 1e-5), a guard
//     against ln 0 that adds up to about V·1e-5/e nats over a large vocabulary's tail; here the
//     entropy is exact (0·ln 0 = 0), which every backend can bound. Its bonus token comes from the next round's
//     sampling; here it is the argmax of p at the last accepted node, so the mode is deterministic.
//   - Medusa's and EAGLE's candidates are padded retrieve rows with the root in column 0, as here;
//     EAGLE-2 sorts its rows lexicographically, so "the lowest path index" is in tree_mask's
//     leaf-index order here.
//   - The stochastic multi-draft modes (SpecInfer's recursive rejection, with and without EAGLE's
//     without-replacement renormalisation) are not in this version.
#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_semi.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "gdist.h"
#include "tree_common.h"
#include "tree_gen.h"

namespace attnbench::decoding {

TreeVerifyParams tree_verify_params(const Case& c) {
  TreeVerifyParams p{};
  p.batch = static_cast<int32_t>(c.i64("batch"));
  p.nodes = static_cast<int32_t>(c.i64("nodes"));
  p.max_depth = static_cast<int32_t>(c.i64("max_depth"));
  p.vocab = static_cast<int32_t>(c.i64("vocab"));
  p.mode = c.str("mode") == "typical" ? kTreeTypical : kTreeGreedy;
  p.epsilon = static_cast<float>(c.f64("epsilon"));
  p.delta = static_cast<float>(c.f64("delta"));
  return p;
}

namespace {

constexpr double kU32 = 0x1p-24;

struct NodeStats {
  int64_t argmax = 0;
  double entropy = 0;
};

NodeStats node_stats(const std::vector<double>& p) {
  NodeStats s;
  for (size_t y = 0; y < p.size(); ++y) {
    if (p[y] > p[static_cast<size_t>(s.argmax)]) s.argmax = static_cast<int64_t>(y);
    if (p[y] > 0) s.entropy -= p[y] * std::log(p[y]);
  }
  return s;
}

class TreeVerify final : public Method {
 public:
  TreeVerify() {
    schema_.add({"batch", ParamType::Int, Value(int64_t{4}), {}, 1.0, 65536.0, {}, "trees verified at once"});
    schema_.add({"nodes", ParamType::Int, Value(int64_t{16}), {}, 2.0, 1024.0, {}, "n: tree tokens per row, the root included"});
    schema_.add({"max_depth", ParamType::Int, Value(int64_t{4}), {}, 1.0, 1023.0, {},
                 "D: the deepest draft's depth (at most D + 1 tokens emitted)"});
    schema_.add({"vocab", ParamType::Int, Value(int64_t{32000}), {}, 2.0, 1048576.0, {}, "V: vocabulary size"});
    schema_.add({"mode", ParamType::String, Value(std::string("greedy")), {}, {}, {}, {"greedy", "typical"},
                 "greedy: tokens equal to the target's argmax; typical: Medusa's p(x) > min(epsilon, delta*exp(-H))"});
    schema_.add({"epsilon", ParamType::Float, Value(0.3), {}, 1e-6, 1.0, {}, "typical: the threshold's cap (Medusa's posterior_threshold)"});
    schema_.add({"delta", ParamType::Float, Value(0.09), {}, 1e-6, 10.0, {}, "typical: the entropy factor (Medusa's posterior_alpha)"});
    schema_.add({"shape", ParamType::String, Value(std::string("random")), {}, {}, {}, {"random", "chain", "star"},
                 "the tree (tree_mask's shapes)"});
    schema_.add({"dist", ParamType::String, Value(std::string("zipf")), {}, {}, {},
                 {"zipf", "peaked", "flat", "bimodal", "ties", "onehot"}, "shape of the target distributions (G-DIST)"});
    schema_.add({"draft", ParamType::String, Value(std::string("perturbed")), {}, {}, {},
                 {"perturbed", "independent", "equal", "disjoint"}, "how the drafts' distribution relates to p (the acceptance oracle)"});
    schema_.rule("chain: nodes - 1 <= max_depth", [](const Params& p, const std::string&) -> std::string {
      if (p.str("shape") != "chain" || p.i64("nodes") - 1 <= p.i64("max_depth")) return {};
      return cat("a chain of ", p.i64("nodes"), " nodes is ", p.i64("nodes") - 1, " deep, beyond max_depth=", p.i64("max_depth"));
    });
    schema_.rule("siblings: nodes - 1 <= vocab", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("nodes") - 1 <= p.i64("vocab")) return {};
      return cat(p.i64("nodes") - 1, " drafts cannot be distinct siblings over a vocabulary of ", p.i64("vocab"));
    });
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    const int64_t B = s.batch, L = s.max_depth + 1;
    const CheckClass cls = s.mode == kTreeGreedy ? CheckClass::EXACT : CheckClass::SEMI;
    OutputDecl tokens{"tokens_out", DType::i32, {B, L}, cls, "emitted", 1, -1.0};
    tokens.doc = "tokens_out [batch, max_depth+1]: the accepted drafts, then the bonus token; -1 past emitted";
    OutputDecl emitted{"emitted", DType::i32, {B}, cls};
    emitted.doc = "emitted [batch]: tokens written (accept_len + 1)";
    OutputDecl len{"accept_len", DType::i32, {B}, cls};
    len.doc = "accept_len [batch]: drafts accepted on the chosen path";
    OutputDecl path{"best_path", DType::i32, {B}, cls};
    path.doc = "best_path [batch]: the chosen retrieve row (the longest accepted prefix; ties as the mode says)";
    OutputDecl nodes{"accepted_nodes", DType::i32, {B, L}, cls, "emitted", 1, -1.0};
    nodes.doc = "accepted_nodes [batch, max_depth+1]: the root, then the accepted nodes; -1 past emitted";
    OutputDecl boundary{"boundary", DType::i32, {B}, CheckClass::SEMI};
    boundary.check_only = true;
    boundary.doc = "boundary [batch]: 1 where a typical decision or a score tie lies within fp32's error";
    return {tokens, emitted, len, path, nodes, boundary};
  }

  TensorMap inputs(const Case& c) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    const int64_t B = s.batch, n = s.nodes, V = s.vocab, L = s.max_depth + 1;
    const DistShape shape = parse_dist_shape(c.str("dist"));
    const DraftRelation rel = parse_draft_relation(c.str("draft"));
    HostTensor target("target_probs", DType::f32, {B, n, V}), tokens("tokens", DType::i32, {B, n});
    HostTensor retrieve("retrieve", DType::i32, {B, n, L}), leaves("n_leaves", DType::i32, {B});
    std::vector<std::vector<int32_t>> parents(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      parents[b] = tree_parents(c.str("shape"), n, s.max_depth, c.seed, b);
      std::vector<int32_t> paths;
      const int64_t l = tree_leaf_paths(parents[b], s.max_depth, paths);
      paths.resize(static_cast<size_t>(n * L), -1);
      for (int64_t i = 0; i < n * L; ++i) retrieve.set(b * n * L + i, paths[i]);
      leaves.set(b, l);
    }
    const PhiloxStream pick(c.seed, "tokens", kDomainInputs);
    harness_pool().parallel_for(B * n, [&](int64_t begin, int64_t end) {
      for (int64_t slot = begin; slot < end; ++slot) {
        const std::vector<double> p = gdist(shape, "target_probs", c.seed, slot, V,
                                            rel == DraftRelation::disjoint ? disjoint_split(c.seed, slot, V) : std::vector<char>{});
        for (int64_t y = 0; y < V; ++y) target.set(slot * V + y, p[y]);
      }
    }, 16);
    // The drafts: each node's children from its q, siblings distinct, in creation order.
    harness_pool().parallel_for(B, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const std::vector<int32_t>& par = parents[b];
        tokens.set(b * n, std::min<double>(V - 1, std::floor(pick.uniform_f64(static_cast<uint64_t>(b * n)) * V)));
        std::vector<double> p(V);
        for (int64_t u = 0; u < n; ++u) {
          std::vector<int64_t> children;
          for (int64_t ch = u + 1; ch < n; ++ch)
            if (par[ch] == u) children.push_back(ch);
          if (children.empty()) continue;
          target.get_row((b * n + u) * V, V, p.data());
          std::vector<double> q = draft_for(rel, shape, p, c.seed, b * n + u, V);
          for (int64_t ch : children) {
            double total = 0;
            for (double x : q) total += x;
            int64_t token = -1;
            if (total > 0) {
              const double mass = pick.uniform_f64(static_cast<uint64_t>(b * n + ch)) * total;
              double cum = 0;
              for (int64_t y = 0; y < V && token < 0; ++y) {
                cum += q[y];
                if (q[y] > 0 && mass < cum) token = y;
              }
              for (int64_t y = V - 1; token < 0; --y)
                if (q[y] > 0) token = y;
            } else {
              for (int64_t y = 0; token < 0; ++y) {  // q exhausted by the siblings: the lowest unused token
                bool used = false;
                for (int64_t sib : children)
                  if (sib < ch && tokens.get(b * n + sib) == static_cast<double>(y)) used = true;
                if (!used) token = y;
              }
            }
            tokens.set(b * n + ch, static_cast<double>(token));
            q[token] = 0;
          }
        }
      }
    });
    TensorMap in;
    in.emplace("target_probs", std::move(target));
    in.emplace("tokens", std::move(tokens));
    in.emplace("retrieve", std::move(retrieve));
    in.emplace("n_leaves", std::move(leaves));
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    const int64_t B = s.batch, n = s.nodes, V = s.vocab, L = s.max_depth + 1;
    const bool typical = s.mode == kTreeTypical;
    const double eps = s.epsilon, delta = s.delta;
    const HostTensor &target = in.at("target_probs"), &tokens = in.at("tokens"), &retrieve = in.at("retrieve");
    HostTensor out("tokens_out", DType::i32, {B, L}), emitted("emitted", DType::i32, {B}), len_t("accept_len", DType::i32, {B});
    HostTensor best_t("best_path", DType::i32, {B}), nodes_t("accepted_nodes", DType::i32, {B, L}), boundary("boundary", DType::i32, {B});
    out.fill(-1);
    nodes_t.fill(-1);
    harness_pool().parallel_for(B, [&](int64_t begin, int64_t end) {
      std::vector<double> p(V);
      std::vector<NodeStats> stats(n);
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t u = 0; u < n; ++u) {
          target.get_row((b * n + u) * V, V, p.data());
          stats[u] = node_stats(p);
        }
        const auto prob = [&](int64_t u, int64_t x) { return target.get((b * n + u) * V + x); };
        const auto tau = [&](int64_t u) { return std::min(eps, delta * std::exp(-stats[u].entropy)); };
        const auto tau_err = [&](int64_t u) { return 8 * kU32 * (1 + stats[u].entropy); };
        const int64_t leaves = static_cast<int64_t>(in.at("n_leaves").get(b));
        int64_t best = 0, best_len = -1;
        double best_score = -INFINITY;
        bool edge = false;
        std::vector<std::pair<int64_t, double>> scored;  // (len, score) per path
        for (int64_t l = 0; l < leaves; ++l) {
          int64_t len = 0;
          double score = 0;
          for (int64_t t = 1; t < L; ++t) {
            const auto v = static_cast<int64_t>(retrieve.get((b * n + l) * L + t));
            if (v < 0) break;
            const auto u = static_cast<int64_t>(retrieve.get((b * n + l) * L + t - 1));
            const auto x = static_cast<int64_t>(tokens.get(b * n + v));
            bool ok;
            if (typical) {
              const double px = prob(u, x), th = tau(u);
              ok = px > th;
              edge = edge || std::abs(px - th) <= tau_err(u) * th;
              if (ok) score += std::log(px);
            } else {
              ok = x == stats[u].argmax;
            }
            if (!ok) break;
            ++len;
          }
          scored.emplace_back(len, score);
          const bool better = len > best_len || (typical && len == best_len && score > best_score);
          if (better) {
            best = l;
            best_len = len;
            best_score = score;
          }
        }
        // Two different accepted prefixes of the longest length whose scores fp32 cannot order.
        if (typical)
          for (int64_t l = 0; l < leaves; ++l) {
            if (l == best || scored[l].first != best_len || best_len == 0) continue;
            bool same_prefix = true;
            for (int64_t t = 1; t <= best_len; ++t)
              same_prefix = same_prefix && retrieve.get((b * n + l) * L + t) == retrieve.get((b * n + best) * L + t);
            const double gate = 8 * kU32 * static_cast<double>(best_len + 1) * std::max(1.0, std::abs(best_score));
            if (!same_prefix && best_score - scored[l].second <= gate) edge = true;
          }
        int64_t last = 0;
        for (int64_t t = 0; t <= best_len; ++t) {
          const auto v = static_cast<int64_t>(retrieve.get((b * n + best) * L + t));
          nodes_t.set(b * L + t, static_cast<double>(v));
          if (t > 0) out.set(b * L + t - 1, tokens.get(b * n + v));
          last = v;
        }
        out.set(b * L + best_len, static_cast<double>(stats[last].argmax));
        emitted.set(b, static_cast<double>(best_len + 1));
        len_t.set(b, static_cast<double>(best_len));
        best_t.set(b, static_cast<double>(best));
        boundary.set(b, edge ? 1 : 0);
      }
    });
    Reference ref;
    for (HostTensor* t : {&out, &emitted, &len_t, &best_t, &nodes_t, &boundary}) ref.tensors.emplace(t->name(), std::move(*t));
    return ref;
  }

  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override {
    if (tree_verify_params(c).mode == kTreeGreedy) return Method::check(c, in, ref, got);
    // Typical: rows whose decisions lie within fp32's error of the threshold are excluded, counted.
    const HostTensor& boundary = ref.tensors.at("boundary");
    std::vector<int64_t> cut(static_cast<size_t>(boundary.numel()), kNoCut), slack(cut.size(), 0);
    for (int64_t b = 0; b < boundary.numel(); ++b)
      if (boundary.get(b) != 0) {
        cut[b] = 0;
        slack[b] = -1;
      }
    CheckReport report;
    for (const OutputDecl& d : outputs(c)) {
      if (d.check_only) continue;
      if (d.name == "tokens_out" || d.name == "accepted_nodes")
        report.outputs.push_back(check_semi(d, ref.tensors.at(d.name), ref.tensors.at("emitted"), got.at(d.name), got.at("emitted"), cut));
      else
        report.outputs.push_back(check_semi_counts(d, ref.tensors.at(d.name), got.at(d.name), slack));
    }
    return report;
  }

  Work work(const Case& c) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    const double Bn = double{1.0} * s.batch * s.nodes, L = s.max_depth + 1.0;
    Work w;
    w.flops = Bn * s.vocab * (s.mode == kTreeTypical ? 3.0 : 1.0);  // a compare per probability; typical: p·ln p summed
    // Every node's distribution read once; tokens and paths read; the outputs written.
    w.bytes = 4 * Bn * s.vocab + 4 * Bn + 4 * Bn * L + 4.0 * s.batch * (2 * L + 3);
    w.bound = Bound::read;
    return w;
  }

  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    double emitted = 0, leaves = 0;
    for (int64_t b = 0; b < s.batch; ++b) {
      emitted += out.at("emitted").get(b);
      leaves += in.at("n_leaves").get(b);
    }
    const double per_verify = emitted / s.batch;
    // One target forward per verification emits this many tokens; drafting counted free.
    return {{"tree_size", s.nodes}, {"leaves_mean", leaves / s.batch}, {"mean_accept_len", per_verify - 1},
            {"tokens_per_verify", per_verify}, {"modeled_speedup", per_verify}};
  }

  // Chain verification of as many drafts (speculative_sampling, at most 64), on the same backend.
  std::optional<RelatedCase> baseline(const Case& c) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    return RelatedCase{"baseline", "speculative_sampling", "",
                       {{"batch", Value(int64_t{s.batch})},
                        {"draft_len", Value(int64_t{std::min<int32_t>(s.nodes - 1, 64)})},
                        {"vocab", Value(int64_t{s.vocab})},
                        {"dist", Value(c.str("dist") == "onehot" ? std::string("zipf") : c.str("dist"))},
                        {"draft", Value(c.str("draft"))}},
                       DType::f32};
  }

 private:
  MethodInfo info_{.name = "tree_verify",
                   .family = "decoding",
                   .summary = "verification of a draft tree: greedy argmax paths and Medusa's typical acceptance",
                   .catalog_id = "C-TREEVERIFY",
                   .paper = "Cai et al. 2024, Medusa; Miao et al. 2024, SpecInfer",
                   .spec_version = 1,
                   .dtypes = {DType::f32}};
  ParamSchema schema_;
};

}  // namespace
}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::TreeVerify);
