// tree_verify — verification of a draft tree against the target's next-token distributions: greedy
// (the longest path whose every token is the target's argmax), Medusa's typical acceptance, and
// multi-draft recursive rejection sampling (SpecInfer), with i.i.d. drafts or drafts without
// replacement (EAGLE's renormalisation).
// Catalog: C-TREEVERIFY. Papers: Cai et al. 2024, Medusa (typical acceptance, evaluate_posterior);
// Miao et al. 2024, SpecInfer (tree verification, multi-step speculative sampling); Jeon et al. 2024,
// Recursive Speculative Decoding (the without-replacement form); the greedy rule as EAGLE-2's
// evaluate_posterior applies it.
//
// Semantics (spec_version 2; version 1 had greedy and typical only, unchanged). Row b holds a tree
// of n nodes (node 0 the root, the last verified token) given as its leaves' root-first paths
// (tree_mask's retrieve and n_leaves, inputs here as a serving engine passes them), a token per
// node, and p_u = target_probs[b, u]: the target's distribution of the token after node u.
//
// Greedy and typical. For a path v_0 = root, v_1, ..., v_d, the draft v_t is accepted by its
// parent's distribution p = p_{v_{t−1}} when, with x = tokens[v_t]:
//   greedy   x = argmax p (the lowest index among equal maxima)
//   typical  p(x) > τ, τ = min(ε, δ·exp(−H(p))), H(p) = −Σ_y p(y)·ln p(y) (0·ln 0 = 0), ε and δ
//            as f32 values (Medusa's posterior_threshold and posterior_alpha)
// A path's accepted length is its longest accepted prefix. The chosen path has the longest; among
// equals, typical prefers the highest Σ ln p_{v_{t−1}}(x_t) over the accepted prefix, then either
// mode the lowest path index (retrieve row). Emitted: the accepted tokens, then the bonus token
// argmax p_{v_len} (lowest index), so emitted = accept_len + 1 ≤ max_depth + 1.
//
// Rejection (i.i.d. drafts) and rejection_wor (drafts without replacement). The walk starts at the
// root. At node u with children c_1 < ... < c_m (node index order; `parents` input), r = p_u and
// g = q_u = draft_probs[b, u] (the distribution the children were drawn from), for j = 1..m, with
// x = tokens[r, c_j] and U_j = U("spec.accept", r·(n − 1) + c_j − 1):
//   j = 1:  accept iff fp32(U_j·g(x)) < r(x), the f32 inputs (speculative_sampling's test exactly)
//   j > 1:  accept iff U_j·g(x) < r(x) in fp64
//   accept: emit x, descend to c_j;
//   reject: w = max(0, r − g) in fp64; r = w/Σw (r = 0 when Σw = 0); rejection_wor then also sets
//           g(x) = 0 and g = g/Σg (g = 0 when Σg = 0).
// When every child is rejected, the row emits the exponential race (race.h) over fp32(w), the last
// residual unnormalised (over p_u when w is all zero), with U("spec.race", (r·n + u)·V + y); at a
// leaf, the race over p_u with the same uniforms; then the row stops. So a chain (node t's parent
// t − 1, max_depth = n − 1 = K) verifies exactly as speculative_sampling with draft_len K on the
// same inputs (the inputs are generated to be the same; a test checks both on every backend).
// Every backend computes the residuals in fp64 (lavapipe and the GPUs run fp64; the work is a few
// operations per probability read), sums in any order.
//
// Inputs: target_probs [batch, n, V] f32 from G-DIST (gdist.h) at slot b·n + u with shape `dist`;
// the tree from tree_gen.h by `shape` (retrieve [batch, n, max_depth + 1] i32, n_leaves [batch];
// the stochastic modes also parents [batch, n] i32). Greedy and typical: tokens [batch, n] i32, a
// child c of u drawn from q_u (G-DIST's `draft` relation next to p_u) by inverse CDF over the f64
// q with earlier siblings' tokens removed (siblings distinct, as EAGLE's top-k children are; a
// node whose siblings exhausted q takes the lowest unused token), fp64 uniform n = b·n + c of
// stream "tokens"; the root's token by the same uniform, ⌊u·V⌋ (never read). Stochastic modes:
// draft_probs [batch, n, V] f32, q_u at slot b·n + u (speculative_sampling's draft at its slot);
// tokens [rows, n] i32, the child c of u drawn from q_u by inverse CDF over the f32 values with an
// fp64 cumulative sum and the fp64 uniform r·(n − 1) + c − 1 of stream "draft_token_ids" (the
// chain's draws are speculative_sampling's), i.i.d. for rejection, without the earlier siblings'
// tokens for rejection_wor (the lowest unused token when they exhausted q); the root's token is 0
// (never read). Distribution mode (`draws` > 0, stochastic modes): batch = 1, every row verifies
// tree 0 with its own drafts and uniforms.
//
// Outputs: tokens_out [rows, D+1] (accepted tokens, then the bonus or resampled token; −1 past
// `emitted`), emitted [rows], accept_len [rows], best_path [rows] (the chosen retrieve row; in
// the stochastic modes the lowest row whose path holds the accepted nodes), accepted_nodes
// [rows, D+1] (the root and the accepted nodes; −1 past `emitted`).
// Greedy: EXACT (equal f32 values compare alike everywhere). Typical: SEMI; a row is a boundary
// event (check-only `boundary`) when a decision on some path's accepted prefix or at its first
// rejection has |p(x) − τ| within the fp32 error of τ (every backend rounds each p·ln p in fp32, ln
// to 2 ulp, and sums the terms in fp64, so τ's relative error is at most 8u·(1 + H), u = 2⁻²⁴, exp
// included), or when two different accepted prefixes of the longest length score within
// 8u·(len + 1)·max(1, |score|); such rows are excluded and counted.
// Stochastic modes: SEMI, and STAT in distribution mode. The reference carries, with every fp64
// residual r and draft g, a first-order bound on its absolute error under any summation order
// (docs/methodology.md "Tree verification"): w's error ≤ E_r + E_g + u₅₃|r − g|; Σw's ≤ ΣE_w +
// V·u₅₃·Σw; r/Σ's ≤ E_w/Σ + r·(E_Σ/Σ + u₅₃); u₅₃ = 2⁻⁵³. The check-only `cut` [rows] is the
// emitted position of the first boundary event on the reference's path (D + 1: none): a first
// test with |accept_margin| ≤ 2ε (as speculative_sampling's), a later test with |U·g(x) − r(x)| ≤
// 2(U·E_g + E_r) + 4u₅₃(U·g(x) + r(x)), a normaliser within twice its error of zero, or a race
// whose winner changes (or whose gap is within 144ε) when every weight moves by twice its error.
// Positions from the cut on are excluded and counted. STAT: at every node u, among the rows that
// accepted u (u in accepted_nodes), the token emitted after it is tested against p̄_u (the
// multi-draft rejection theorem; one chi-square per node, Bonferroni).
//
// Choices, and where they differ from the code they come from:
//   - Medusa's evaluate_posterior computes τ from the softmax of logits at a temperature; here p is
//     the input (the temperature applied already). Its entropy is −Σ p·ln(p + 1e-5), a guard
//     against ln 0 that adds up to about V·1e-5/e nats over a large vocabulary's tail; here the
//     entropy is exact (0·ln 0 = 0), which every backend can bound. Its bonus token comes from the
//     next round's sampling; here it is the argmax of p at the last accepted node, so the mode is
//     deterministic.
//   - Medusa's and EAGLE's candidates are padded retrieve rows with the root in column 0, as here;
//     EAGLE-2 sorts its rows lexicographically, so "the lowest path index" is in tree_mask's
//     leaf-index order here.
//   - SpecInfer and EAGLE normalise the residual in fp32 torch ops; here in fp64, so the check's
//     gate stays a derived bound a few ulp wide rather than fp32's V-term summation error.
//   - EAGLE's sampling verifier treats its top-k drafts as a point mass (q(x) = 1) and zeroes the
//     rejected token in the target's residual; rejection_wor keeps the draft distribution the
//     drafts were drawn from and renormalises it without the rejected token (Jeon et al.'s
//     recursive rejection without replacement), the form that preserves the target distribution
//     when the drafts are drawn without replacement, which the STAT test checks.
//   - The first test at a node uses the f32 inputs unnormalised, as speculative_sampling does, so a
//     chain is speculative_sampling bit for bit; later tests use the normalised residual.
#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_semi.h"
#include "attnbench/check_stat.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "distribution_mode.h"
#include "gdist.h"
#include "race.h"
#include "speculative_sampling_common.h"
#include "tree_common.h"
#include "tree_gen.h"
#include "tree_verify_stat.h"

namespace attnbench::decoding {

TreeVerifyParams tree_verify_params(const Case& c) {
  TreeVerifyParams p{};
  const std::string mode = c.str("mode");
  const int64_t draws = c.i64("draws");
  p.batch = static_cast<int32_t>(c.i64("batch"));
  p.nodes = static_cast<int32_t>(c.i64("nodes"));
  p.max_depth = static_cast<int32_t>(c.i64("max_depth"));
  p.vocab = static_cast<int32_t>(c.i64("vocab"));
  p.mode = mode == "typical" ? kTreeTypical : mode == "rejection" ? kTreeRejection : mode == "rejection_wor" ? kTreeRejectionWor : kTreeGreedy;
  p.epsilon = static_cast<float>(c.f64("epsilon"));
  p.delta = static_cast<float>(c.f64("delta"));
  p.rows = static_cast<int32_t>(draws > 0 ? draws : p.batch);
  p.seed_lo = static_cast<uint32_t>(c.seed);
  p.seed_hi = static_cast<uint32_t>(c.seed >> 32);
  p.accept_stream = PhiloxStream(c.seed, kAcceptSite, kDomainDraws).stream_id();
  p.race_stream = PhiloxStream(c.seed, kRaceSite, kDomainDraws).stream_id();
  return p;
}

namespace {

constexpr double kU32 = 0x1p-24, kU53 = 0x1p-53;

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

// Node u's children in node index order.
std::vector<std::vector<int64_t>> children_of(const std::vector<int32_t>& parents) {
  std::vector<std::vector<int64_t>> ch(parents.size());
  for (size_t v = 1; v < parents.size(); ++v) ch[static_cast<size_t>(parents[v])].push_back(static_cast<int64_t>(v));
  return ch;
}

// One row of the stochastic modes, with its first boundary event (semantics in the header).
struct StochasticRow {
  std::vector<int64_t> nodes{0};  // the root, then the accepted nodes
  std::vector<int64_t> tokens;    // emitted: the accepted drafts, then the race's token
  int64_t cut = -1;               // emitted position of the first boundary event; −1: none
};

class StochasticWalk {
 public:
  StochasticWalk(const TreeVerifyParams& s, const Case& c, const TensorMap& in)
      : s_(s), in_(in), accept_(c.seed, kAcceptSite, kDomainDraws), race_(c.seed, kRaceSite, kDomainDraws) {}

  StochasticRow run(int64_t row, const std::vector<std::vector<int64_t>>& children) {
    const int64_t V = s_.vocab, n = s_.nodes, b = tree_of_row(s_, row);
    const HostTensor &target = in_.at("target_probs"), &draft = in_.at("draft_probs"), &tokens = in_.at("tokens");
    p_.resize(V);
    r_.resize(V);
    g_.resize(V);
    er_.resize(V);
    eg_.resize(V);
    w_.resize(V);
    ew_.resize(V);
    StochasticRow out;
    const auto boundary = [&] {
      if (out.cut < 0) out.cut = static_cast<int64_t>(out.tokens.size());
    };
    int64_t u = 0;
    while (true) {
      target.get_row((b * n + u) * V, V, p_.data());
      const std::vector<int64_t>& kids = children[u];
      bool residual = false, accepted = false;
      if (!kids.empty()) {
        r_ = p_;
        draft.get_row((b * n + u) * V, V, g_.data());
        std::fill(er_.begin(), er_.end(), 0.0);
        std::fill(eg_.begin(), eg_.end(), 0.0);
        for (size_t j = 0; j < kids.size() && !accepted; ++j) {
          const int64_t ch = kids[j];
          const auto x = static_cast<int64_t>(tokens.get(row * n + ch));
          const double U = accept_.uniform_f32(tree_accept_index(s_, row, ch));
          if (j == 0) {  // the f32 test; the fp64 product of two f32 values is exact
            accepted = U * g_[x] < r_[x];
            if (accept_is_boundary(accept_margin(U, r_[x], g_[x]))) boundary();
          } else {
            const double a = U * g_[x], gate = 2 * (U * eg_[x] + er_[x]) + 4 * kU53 * (a + r_[x]);
            accepted = a < r_[x];
            if (std::abs(a - r_[x]) <= gate) boundary();
          }
          if (accepted) {
            out.nodes.push_back(ch);
            out.tokens.push_back(x);
            u = ch;
            break;
          }
          reject(x, boundary);
          residual = true;
        }
        if (accepted) continue;
      }
      // Every child rejected (the last residual), or a leaf (p_u).
      bool zero = true;  // the race's weights are fp32(w): all zero races over p_u
      if (residual)
        for (int64_t y = 0; y < V && zero; ++y) zero = static_cast<float>(w_[y]) == 0;
      const uint64_t first = tree_race_index(s_, row, u, 0);
      if (!residual || zero) {
        const RaceResult rc = race_weights(race_, first, p_, words_);
        if (race_is_boundary(rc.gap)) boundary();
        out.tokens.push_back(rc.token);
      } else {
        const RaceResult rc = race_weights(race_, first, w_, words_);
        if (race_is_boundary(rc.gap)) boundary();
        // The winner must survive every weight moving by twice its error against it.
        bool moved = false;
        for (int64_t y = 0; y < V && !moved; ++y) moved = ew_[y] > 0;
        if (moved) {
          alt_.resize(V);
          for (int64_t y = 0; y < V; ++y) alt_[y] = y == rc.token ? std::max(0.0, w_[y] - 2 * ew_[y]) : w_[y] + 2 * ew_[y];
          const RaceResult shaken = race_weights(race_, first, alt_, words_);
          if (shaken.token != rc.token || race_is_boundary(shaken.gap)) boundary();
        }
        out.tokens.push_back(rc.token);
      }
      return out;
    }
  }

 private:
  // A rejected child with token x: the residual, its normaliser, and (without replacement) the
  // draft renormalised without x, each with its error bound.
  template <typename Boundary>
  void reject(int64_t x, const Boundary& boundary) {
    const size_t V = r_.size();
    double z = 0, ez = 0;
    for (size_t y = 0; y < V; ++y) {
      const double d = r_[y] - g_[y];
      w_[y] = std::max(0.0, d);
      ew_[y] = er_[y] + eg_[y] + kU53 * std::abs(d);
      z += w_[y];
      ez += ew_[y];
    }
    ez += static_cast<double>(V) * kU53 * z;
    normalise(w_, ew_, z, ez, r_, er_, boundary);
    if (s_.mode != kTreeRejectionWor) return;
    g_[x] = 0;
    eg_[x] = 0;
    double t = 0, et = 0;
    for (size_t y = 0; y < V; ++y) {
      t += g_[y];
      et += eg_[y];
    }
    et += static_cast<double>(V) * kU53 * t;
    const std::vector<double> g = g_, eg = eg_;
    normalise(g, eg, t, et, g_, eg_, boundary);
  }

  // out = v / z with bounds; z within twice its error of zero (but not exactly zero with no error)
  // is a boundary event: whether the residual exists is then fp arithmetic's call.
  template <typename Boundary>
  static void normalise(const std::vector<double>& v, const std::vector<double>& ev, double z, double ez,
                        std::vector<double>& out, std::vector<double>& eout, const Boundary& boundary) {
    if (z <= 2 * ez && !(z == 0 && ez == 0)) boundary();
    for (size_t y = 0; y < v.size(); ++y) {
      out[y] = z > 0 ? v[y] / z : 0.0;
      eout[y] = z > 0 ? ev[y] / z + out[y] * (ez / z + kU53) : 0.0;
    }
  }

  const TreeVerifyParams& s_;
  const TensorMap& in_;
  PhiloxStream accept_, race_;
  std::vector<double> p_, r_, g_, er_, eg_, w_, ew_, alt_;
  std::vector<uint32_t> words_;
};

class TreeVerify final : public Method {
 public:
  TreeVerify() {
    schema_.add({"batch", ParamType::Int, Value(int64_t{4}), {}, 1.0, 65536.0, {}, "trees verified at once"});
    schema_.add({"nodes", ParamType::Int, Value(int64_t{16}), {}, 2.0, 1024.0, {}, "n: tree tokens per row, the root included"});
    schema_.add({"max_depth", ParamType::Int, Value(int64_t{4}), {}, 1.0, 1023.0, {},
                 "D: the deepest draft's depth (at most D + 1 tokens emitted)"});
    schema_.add({"vocab", ParamType::Int, Value(int64_t{32000}), {}, 2.0, 1048576.0, {}, "V: vocabulary size"});
    schema_.add({"mode", ParamType::String, Value(std::string("greedy")), {}, {}, {}, {"greedy", "typical", "rejection", "rejection_wor"},
                 "greedy: tokens equal to the target's argmax; typical: Medusa's p(x) > min(epsilon, delta*exp(-H)); "
                 "rejection: SpecInfer's recursive rejection of i.i.d. drafts; rejection_wor: drafts without replacement"});
    schema_.add({"epsilon", ParamType::Float, Value(0.3), {}, 1e-6, 1.0, {}, "typical: the threshold's cap (Medusa's posterior_threshold)"});
    schema_.add({"delta", ParamType::Float, Value(0.09), {}, 1e-6, 10.0, {}, "typical: the entropy factor (Medusa's posterior_alpha)"});
    add_tree_shape(schema_, "the tree (tree_mask's shapes)");
    schema_.add({"dist", ParamType::String, Value(std::string("zipf")), {}, {}, {},
                 {"zipf", "peaked", "flat", "bimodal", "ties", "onehot"}, "shape of the target distributions (G-DIST)"});
    schema_.add({"draft", ParamType::String, Value(std::string("perturbed")), {}, {}, {},
                 {"perturbed", "independent", "equal", "disjoint"}, "how the drafts' distribution relates to p (the acceptance oracle)"});
    ParamSpec draws{"draws", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1e7, {},
                    "distribution mode (stochastic modes): this many rows verify tree 0 with their own drafts, tested (0: off)"};
    draws.id_omits_default = true;  // added in spec_version 2: the recorded ids stay valid
    schema_.add(draws);
    schema_.rule("siblings: nodes - 1 <= vocab", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("nodes") - 1 <= p.i64("vocab")) return {};
      return cat(p.i64("nodes") - 1, " drafts cannot be distinct siblings over a vocabulary of ", p.i64("vocab"));
    });
    schema_.rule("draws > 0 needs a stochastic mode", [](const Params& p, const std::string&) -> std::string {
      const std::string m = p.str("mode");
      if (p.i64("draws") == 0 || m == "rejection" || m == "rejection_wor") return {};
      return cat("mode=", m, " is deterministic: draws=", p.i64("draws"), " needs mode=rejection or rejection_wor");
    });
    add_distribution_rules(schema_, "tree 0 to every row");
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    const int64_t R = s.rows, L = s.max_depth + 1;
    const bool distribution = c.i64("draws") > 0;
    const CheckClass cls = s.mode == kTreeGreedy ? CheckClass::EXACT : CheckClass::SEMI;
    OutputDecl tokens{"tokens_out", DType::i32, {R, L}, distribution ? CheckClass::STAT : cls, "emitted", 1, -1.0};
    tokens.doc = "tokens_out [rows, max_depth+1]: the accepted drafts, then the bonus or resampled token; -1 past emitted";
    OutputDecl emitted{"emitted", DType::i32, {R}, cls};
    emitted.doc = "emitted [rows]: tokens written (accept_len + 1)";
    OutputDecl len{"accept_len", DType::i32, {R}, cls};
    len.doc = "accept_len [rows]: drafts accepted on the chosen path";
    OutputDecl path{"best_path", DType::i32, {R}, cls};
    path.doc = "best_path [rows]: the chosen retrieve row (the longest accepted prefix; ties as the mode says)";
    OutputDecl nodes{"accepted_nodes", DType::i32, {R, L}, cls, "emitted", 1, -1.0};
    nodes.doc = "accepted_nodes [rows, max_depth+1]: the root, then the accepted nodes; -1 past emitted";
    if (tree_stochastic(s)) {
      OutputDecl cut{"cut", DType::i32, {R}, CheckClass::SEMI};
      cut.check_only = true;
      cut.doc = "cut [rows]: emitted position of the first boundary event on the reference's path (max_depth+1: none)";
      return {tokens, emitted, len, path, nodes, cut};
    }
    OutputDecl boundary{"boundary", DType::i32, {R}, CheckClass::SEMI};
    boundary.check_only = true;
    boundary.doc = "boundary [batch]: 1 where a typical decision or a score tie lies within fp32's error";
    return {tokens, emitted, len, path, nodes, boundary};
  }

  TensorMap inputs(const Case& c) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    const int64_t B = s.batch, n = s.nodes, V = s.vocab, L = s.max_depth + 1;
    const bool stochastic = tree_stochastic(s);
    const DistShape shape = parse_dist_shape(c.str("dist"));
    const DraftRelation rel = parse_draft_relation(c.str("draft"));
    HostTensor target("target_probs", DType::f32, {B, n, V}), tokens("tokens", DType::i32, {s.rows, n});
    HostTensor retrieve("retrieve", DType::i32, {B, n, L}), leaves("n_leaves", DType::i32, {B});
    HostTensor parents_t("parents", DType::i32, {B, n}), draft("draft_probs", DType::f32, {stochastic ? B : 0, n, V});
    std::vector<std::vector<int32_t>> parents(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      parents[b] = tree_parents(c.str("shape"), n, s.max_depth, c.seed, b);
      for (int64_t i = 0; i < n; ++i) parents_t.set(b * n + i, parents[b][i]);
      std::vector<int32_t> paths;
      const int64_t l = tree_leaf_paths(parents[b], s.max_depth, paths);
      paths.resize(static_cast<size_t>(n * L), -1);
      for (int64_t i = 0; i < n * L; ++i) retrieve.set(b * n * L + i, paths[i]);
      leaves.set(b, l);
    }
    harness_pool().parallel_for(B * n, [&](int64_t begin, int64_t end) {
      for (int64_t slot = begin; slot < end; ++slot) {
        const std::vector<double> p = gdist(shape, "target_probs", c.seed, slot, V,
                                            rel == DraftRelation::disjoint ? disjoint_split(c.seed, slot, V) : std::vector<char>{});
        for (int64_t y = 0; y < V; ++y) target.set(slot * V + y, p[y]);
        if (!stochastic) continue;
        const std::vector<double> q = draft_for(rel, shape, p, c.seed, slot, V);
        for (int64_t y = 0; y < V; ++y) draft.set(slot * V + y, q[y]);
      }
    }, 16);
    if (stochastic)
      draw_stochastic_tokens(c, s, parents, draft, tokens);
    else
      draw_distinct_tokens(c, s, rel, shape, parents, target, tokens);
    TensorMap in;
    in.emplace("target_probs", std::move(target));
    in.emplace("tokens", std::move(tokens));
    in.emplace("retrieve", std::move(retrieve));
    in.emplace("n_leaves", std::move(leaves));
    if (stochastic) {
      in.emplace("draft_probs", std::move(draft));
      in.emplace("parents", std::move(parents_t));
    }
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    return tree_stochastic(tree_verify_params(c)) ? reference_stochastic(c, in) : reference_paths(c, in);
  }

  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    if (s.mode == kTreeGreedy) return Method::check(c, in, ref, got);
    // Rows whose decisions lie within fp arithmetic's error are cut there, counted.
    std::vector<int64_t> cut(static_cast<size_t>(s.rows), kNoCut), slack(cut.size(), 0);
    for (int64_t r = 0; r < s.rows; ++r) {
      const int64_t at = tree_stochastic(s) ? static_cast<int64_t>(ref.tensors.at("cut").get(r))
                                            : (ref.tensors.at("boundary").get(r) != 0 ? 0 : s.max_depth + 1);
      if (at > s.max_depth) continue;
      cut[r] = at;
      slack[r] = -1;
    }
    CheckReport report;
    for (const OutputDecl& d : outputs(c)) {
      if (d.check_only) continue;
      if (d.name == "tokens_out" || d.name == "accepted_nodes") {
        OutputCheck o = check_semi(d, ref.tensors.at(d.name), ref.tensors.at("emitted"), got.at(d.name), got.at("emitted"), cut);
        if (d.cls == CheckClass::STAT && o.pass) {
          const OutputCheck st = check_stat(d, tree_node_tests(c, in, got));
          for (const auto& [k, v] : st.metrics.items()) o.metrics[k] = v;
          o.pass = st.pass;
          o.message = st.message;
        }
        o.cls = d.cls;
        report.outputs.push_back(o);
      } else {
        report.outputs.push_back(check_semi_counts(d, ref.tensors.at(d.name), got.at(d.name), slack));
      }
    }
    return report;
  }

  Work work(const Case& c) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    const double Bn = double{1.0} * s.batch * s.nodes, L = s.max_depth + 1.0, R = s.rows;
    Work w;
    if (tree_stochastic(s)) {
      // A row reads p and q at each node it walks through (at most L) and races once over V:
      // modeled at one rejection per node, its residual, normaliser and race a few flops each.
      w.flops = R * L * s.vocab * 8.0;
      w.bytes = R * L * 8.0 * s.vocab + 4 * R * s.nodes + 4.0 * R * (2 * L + 3);
      w.bound = Bound::compute;
      return w;
    }
    w.flops = Bn * s.vocab * (s.mode == kTreeTypical ? 3.0 : 1.0);  // a compare per probability; typical: p·ln p summed
    // Every node's distribution read once; tokens and paths read; the outputs written.
    w.bytes = 4 * Bn * s.vocab + 4 * Bn + 4 * Bn * L + 4.0 * s.batch * (2 * L + 3);
    w.bound = Bound::read;
    return w;
  }

  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    double emitted = 0, leaves = 0;
    for (int64_t r = 0; r < s.rows; ++r) emitted += out.at("emitted").get(r);
    for (int64_t b = 0; b < s.batch; ++b) leaves += in.at("n_leaves").get(b);
    const double per_verify = emitted / s.rows;
    // One target forward per verification emits this many tokens; drafting counted free.
    Json q = {{"tree_size", s.nodes}, {"leaves_mean", leaves / s.batch}, {"mean_accept_len", per_verify - 1},
              {"tokens_per_verify", per_verify}, {"modeled_speedup", per_verify}};
    if (c.i64("draws") > 0) {
      const OutputCheck st = check_stat(outputs(c).front(), tree_node_tests(c, in, out));
      q["stat_p_value"] = st.metrics["p_value"];
      q["stat_alpha"] = kStatAlpha;
    }
    return q;
  }

  // The target's attention over the same tree (tree_decode draws it from the same parents stream
  // and seed): the forward step a verification follows, at Llama-3-8B's heads over a 1024-token
  // prefix in bf16, so a row shows what verifying costs beside the attention it waits on.
  std::vector<RelatedCase> companions(const Case& c) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    if (c.i64("draws") > 0 || s.batch > 4096) return {};  // distribution mode; past tree_decode's batches
    return {RelatedCase{"target_attention", "tree_decode", "decode",
                        {{"batch", Value(int64_t{s.batch})},
                         {"q_heads", Value(int64_t{32})},
                         {"kv_heads", Value(int64_t{8})},
                         {"head_dim", Value(int64_t{128})},
                         {"nodes", Value(int64_t{s.nodes})},
                         {"prefix", Value(int64_t{1024})},
                         {"max_depth", Value(int64_t{s.max_depth})},
                         {"shape", Value(c.str("shape"))}},
                        DType::bf16}};
  }

  // Chain verification of as many drafts (speculative_sampling, at most 64), on the same backend.
  std::optional<RelatedCase> baseline(const Case& c) const override {
    const TreeVerifyParams s = tree_verify_params(c);
    return RelatedCase{"baseline", "speculative_sampling", "",
                       {{"batch", Value(int64_t{s.batch})},
                        {"draft_len", Value(int64_t{std::min<int32_t>(s.nodes - 1, 64)})},
                        {"vocab", Value(int64_t{s.vocab})},
                        {"draws", Value(c.i64("draws"))},
                        {"dist", Value(c.str("dist") == "onehot" ? std::string("zipf") : c.str("dist"))},
                        {"draft", Value(c.str("draft"))}},
                       DType::f32};
  }

 private:
  // Greedy and typical: each child of u from q_u, siblings distinct, in creation order.
  static void draw_distinct_tokens(const Case& c, const TreeVerifyParams& s, DraftRelation rel, DistShape shape,
                                   const std::vector<std::vector<int32_t>>& parents, const HostTensor& target, HostTensor& tokens) {
    const int64_t n = s.nodes, V = s.vocab;
    const PhiloxStream pick(c.seed, "tokens", kDomainInputs);
    harness_pool().parallel_for(s.batch, [&](int64_t begin, int64_t end) {
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
            int64_t token = inverse_cdf_token(q, pick.uniform_f64(static_cast<uint64_t>(b * n + ch)));
            if (token < 0) token = lowest_unused(tokens, b * n, children, ch);  // siblings exhausted q
            tokens.set(b * n + ch, static_cast<double>(token));
            q[token] = 0;
          }
        }
      }
    });
  }

  // Stochastic modes: every row's children from the stored f32 q_u, i.i.d. or without replacement.
  static void draw_stochastic_tokens(const Case& c, const TreeVerifyParams& s, const std::vector<std::vector<int32_t>>& parents,
                                     const HostTensor& draft, HostTensor& tokens) {
    const int64_t n = s.nodes, V = s.vocab;
    const PhiloxStream pick(c.seed, "draft_token_ids", kDomainInputs);
    std::vector<std::vector<std::vector<int64_t>>> kids(parents.size());
    for (size_t b = 0; b < parents.size(); ++b) kids[b] = children_of(parents[b]);
    harness_pool().parallel_for(s.rows, [&](int64_t begin, int64_t end) {
      std::vector<double> q(V);
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = tree_of_row(s, r);
        tokens.set(r * n, 0.0);
        for (int64_t u = 0; u < n; ++u) {
          if (kids[b][u].empty()) continue;
          draft.get_row((b * n + u) * V, V, q.data());
          for (int64_t ch : kids[b][u]) {
            int64_t token = inverse_cdf_token(q, pick.uniform_f64(tree_accept_index(s, r, ch)));
            if (token < 0) token = lowest_unused(tokens, r * n, kids[b][u], ch);
            tokens.set(r * n + ch, static_cast<double>(token));
            if (s.mode == kTreeRejectionWor) q[token] = 0;
          }
        }
      }
    }, 64);
  }

  // The lowest token no earlier sibling of `ch` holds (row_base: the row's first token).
  static int64_t lowest_unused(const HostTensor& tokens, int64_t row_base, const std::vector<int64_t>& siblings, int64_t ch) {
    for (int64_t y = 0;; ++y) {
      bool used = false;
      for (int64_t sib : siblings)
        if (sib < ch && tokens.get(row_base + sib) == static_cast<double>(y)) used = true;
      if (!used) return y;
    }
  }

  Reference reference_paths(const Case& c, const TensorMap& in) const {
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

  Reference reference_stochastic(const Case& c, const TensorMap& in) const {
    const TreeVerifyParams s = tree_verify_params(c);
    const int64_t R = s.rows, n = s.nodes, L = s.max_depth + 1;
    const HostTensor &retrieve = in.at("retrieve"), &parents = in.at("parents");
    HostTensor out("tokens_out", DType::i32, {R, L}), emitted("emitted", DType::i32, {R}), len_t("accept_len", DType::i32, {R});
    HostTensor best_t("best_path", DType::i32, {R}), nodes_t("accepted_nodes", DType::i32, {R, L}), cut("cut", DType::i32, {R});
    out.fill(-1);
    nodes_t.fill(-1);
    std::vector<std::vector<std::vector<int64_t>>> kids(static_cast<size_t>(s.batch));
    for (int64_t b = 0; b < s.batch; ++b) {
      std::vector<int32_t> par(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) par[i] = static_cast<int32_t>(parents.get(b * n + i));
      kids[b] = children_of(par);
    }
    harness_pool().parallel_for(R, [&](int64_t begin, int64_t end) {
      StochasticWalk walk(s, c, in);
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = tree_of_row(s, r);
        const StochasticRow row = walk.run(r, kids[b]);
        const auto len = static_cast<int64_t>(row.nodes.size()) - 1;
        for (int64_t t = 0; t <= len; ++t) {
          nodes_t.set(r * L + t, static_cast<double>(row.nodes[t]));
          out.set(r * L + t, static_cast<double>(row.tokens[t]));
        }
        emitted.set(r, static_cast<double>(len + 1));
        len_t.set(r, static_cast<double>(len));
        cut.set(r, static_cast<double>(row.cut < 0 ? L : row.cut));
        // The lowest retrieve row through the last accepted node.
        const int64_t leaves = static_cast<int64_t>(in.at("n_leaves").get(b));
        int64_t best = 0;
        for (int64_t l = leaves - 1; l >= 0; --l)
          if (retrieve.get((b * n + l) * L + len) == static_cast<double>(row.nodes.back())) best = l;
        best_t.set(r, static_cast<double>(best));
      }
    }, 64);
    Reference ref;
    for (HostTensor* t : {&out, &emitted, &len_t, &best_t, &nodes_t, &cut}) ref.tensors.emplace(t->name(), std::move(*t));
    return ref;
  }

  MethodInfo info_{.name = "tree_verify",
                   .family = "decoding",
                   .summary = "verification of a draft tree: greedy argmax paths, Medusa's typical acceptance, recursive rejection sampling",
                   .catalog_id = "C-TREEVERIFY",
                   .paper = "Cai et al. 2024, Medusa; Miao et al. 2024, SpecInfer",
                   .spec_version = 2,
                   .dtypes = {DType::f32}};
  ParamSchema schema_;
};

}  // namespace

// STAT of the stochastic modes: at each node u, the token emitted after u among the rows that
// accepted u, against p̄_u (the f32 target normalised).
std::vector<GofResult> tree_node_tests(const Case& c, const TensorMap& in, const TensorMap& out) {
  const TreeVerifyParams s = tree_verify_params(c);
  const int64_t n = s.nodes, V = s.vocab, L = s.max_depth + 1;
  const HostTensor &target = in.at("target_probs"), &tokens = out.at("tokens_out"), &nodes = out.at("accepted_nodes"),
                   &emitted = out.at("emitted");
  std::vector<std::vector<int64_t>> counts(static_cast<size_t>(n), std::vector<int64_t>(V, 0));
  std::vector<GofResult> tests;
  for (int64_t r = 0; r < s.rows; ++r) {
    const auto e = static_cast<int64_t>(emitted.get(r));
    for (int64_t t = 0; t < e && t < L; ++t) {
      const auto u = static_cast<int64_t>(nodes.get(r * L + t)), x = static_cast<int64_t>(tokens.get(r * L + t));
      if (u < 0 || u >= n || x < 0 || x >= V) {  // not a tree's node or a token: the test cannot hold
        GofResult broken;
        broken.name = cat("row ", r, " position ", t);
        broken.p_value = 0;
        broken.impossible = true;
        return {broken};
      }
      ++counts[u][x];
    }
  }
  std::vector<double> p(V);
  for (int64_t u = 0; u < n; ++u) {
    int64_t total = 0;
    for (int64_t x : counts[u]) total += x;
    if (total == 0) continue;
    target.get_row(tree_of_row(s, 0) * n * V + u * V, V, p.data());
    double z = 0;
    for (double x : p) z += x;
    for (double& x : p) x /= z;
    tests.push_back(chi_square_gof(p, counts[u], cat("node ", u)));
  }
  return tests;
}

}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::TreeVerify);
