// eagle2_tree — EAGLE-2's dynamic draft tree: expand the best k nodes of each level by their
// cumulative log-probability, then keep the best total_tokens of every node recorded. Catalog:
// C-EAGLE2-DYNTREE. Paper: Li et al. 2024, EAGLE-2 (context-aware dynamic draft trees); the
// interface after EAGLE's and Jakiro's cnets.py topK_genrate.
//
// Semantics (spec_version 1). Row b is one tree. Row q of its draft logits z_q = draft_logits[b, q]
// stands for the draft model's output at one place, ℓ_q = log_softmax(z_q) (fp64 in the
// reference). Parameters k = top_k, D = depth, T = total_tokens.
//   level 1      the root's children: the top k tokens of row 0, rank r, score ℓ_0[token].
//   level l ≥ 2  frontier(l − 1) = the best k candidates of level l − 1 (below), slot s the s-th
//                best. Slot s's children are the top k tokens of row q = 1 + (l − 2)·k + s, rank r,
//                score min(P, P + ℓ_q[token]) with P the slot's score. Every one of the k² is
//                recorded (levels up to D).
//   candidate c  level 1: c = r; level l: c = k + (l − 2)·k² + s·k + r (creation order). C = k +
//                (D − 1)·k² candidates in all.
//   top k of a row   by logit descending, then token ascending (log_softmax keeps the order of z).
//   best of a set    by score descending, then candidate index ascending.
//   selection    the best min(T, C) of all C candidates; n = 1 + min(T, C) tree nodes.
//   output       the selected in creation order as nodes 1..n−1, node 0 the root (the last
//                verified token, root_token[b]): tokens, parents (node indices, −1 at the root),
//                and tree_mask's outputs over those parents with max_depth = D (mask bits, depth,
//                position_ids = prefix + depth, n_leaves, retrieve: tree_build.h, the same code).
// Closure, the rule: a child's score is min(P, P + ℓ) — never above its parent's on any backend,
// whatever the rounding of ℓ — and the parent's smaller index wins a tie, so every ancestor comes
// before its descendants in the order above and the selected set is ancestor-closed. The
// reference asserts it.
//
// Inputs: draft_logits [batch, slots = 1 + (D − 1)·k, V] f32: row q of tree b is ln p + 0.5·n, p
// from G-DIST (gdist.h) at slot b·slots + q with shape `dist`, n a standard normal per logit
// (stream "draft_logits.noise", normal slot·V + x; none for `ties`, whose equal logits are the
// point), ln by detmath (the same bits everywhere), rounded once to f32; root_token [batch] i32:
// ⌊u·V⌋, uniform b of stream "root_token". Every row is read: with synthetic logits the frontier's
// choice does not change what a row holds, only which node is its parent — the random-weight
// protocol (EAGLE's draft forward per level is outside the method).
//
// Check: every output EXACT against the fp64 reference, except rows holding a boundary event
// (check-only `boundary`), which are excluded and counted (n_boundary_cases), their tree checked for
// validity and their mask, depths, paths against tree_build.h's layout of the impl's own parents.
// The contract every backend keeps: m = max z, S = Σ exp(fl(z − m)) of fp32 terms (exp to 2 ulp)
// summed in fp64, lse = ln(fl32(S)) to 2 ulp, ℓ = fl(fl(z − m) − lse), score = fl(P + ℓ) with the
// min above. With ε = 2^-23 and g ≤ ln V (Σ p·|z − m| ≤ H(p)), S's relative error is (2.5 + g/2)ε,
// ℓ's absolute error 3ε·|ℓ| + (2.5 + g/2)ε (|z − m| and lse are both at most |ℓ|), and a score at
// depth d, a sum of d of them and d roundings, is off by at most
//   Δ(s, d) = ε·((3 + d/2)·|s| + d·(2.5 + ln(V)/2)).
// Two candidates a, c are ordered alike by fp64 and by fp32 when |s_a − s_c| > Δ_a + Δ_c, and
// always when they are siblings (one parent, one lse: the fp32 scores are monotone in the logit,
// and a tie goes to the smaller rank) or one is the other's ancestor (the rule above). A row is a
// boundary event when some other pair within Δ_a + Δ_c decides something: the frontier of a level
// (one of the best k against any other of the level: membership and slot order) or the selection
// (a selected candidate against an unselected one). The top k of a row is decided on the f32
// logits themselves, exactly, so it never is.
//
// Choices, and where they differ from EAGLE's topK_genrate:
//   - total_tokens counts the drafts (EAGLE's total_token counts the root too: it keeps
//     total_tokens − 1); a root and 60 drafts at EAGLE-2's settings, as suites/speculative.json
//     reads them. depth D counts the levels of drafts (EAGLE's depth counts the expansions after the
//     first level: its depth = 5 builds 6 levels, D = 6 here).
//   - total_tokens larger than the C candidates: EAGLE's torch.topk raises; here every candidate
//     is kept (n = 1 + C).
//   - Ties: torch.topk's order among equal values is unspecified; here the lower token (a row's
//     top k) and the lower candidate index (frontier, selection) win, on every backend.
//   - EAGLE never checks that a kept node's parent was kept (its searchsorted silently finds a
//     neighbour); the min rule makes it true by construction here.
//   - EAGLE draws its frontier's slots in score order and the draft runs on them; here the slot
//     order is the same (slot s the s-th best), and row q's logits are inputs.
//   - EAGLE-3's reduced draft vocabulary (d2t) and the logits processor's sorted retrieve rows are
//     not modelled: tokens are the row's indices, retrieve rows in leaf order (tree_mask.cpp).
//   - One tensor of draft rows (the root's, then D − 1 levels of k slots) rather than a root tensor
//     and a level tensor: depth 1 has no level rows, and a row's top k then sits at the candidate
//     indices of its children, so the impls' [slots, k] scratch is indexed by candidate.
//   - The logits are G-DIST's ln p plus a normal of deviation 0.5: its shapes repeat one profile
//     of values in every row (zipf's sorted probabilities are the same everywhere), which would
//     tie cousins' scores exactly; a draft model's rows differ.
//   - The outputs add tree_mask's (mask as bits, retrieve at capacity) to EAGLE's draft_tokens,
//     retrieve_indices, tree_mask and tree_position_ids, and the parents, which a verifier reads.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "attnbench/check.h"
#include "attnbench/detmath.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "eagle2_common.h"
#include "gdist.h"
#include "tree_build.h"

namespace attnbench::decoding {

Eagle2Params eagle2_params(const Case& c) {
  Eagle2Params p{};
  const int64_t k = c.i64("top_k"), D = c.i64("depth");
  p.batch = static_cast<int32_t>(c.i64("batch"));
  p.top_k = static_cast<int32_t>(k);
  p.depth = static_cast<int32_t>(D);
  p.vocab = static_cast<int32_t>(c.i64("vocab"));
  p.slots = static_cast<int32_t>(1 + (D - 1) * k);
  p.candidates = static_cast<int32_t>(k + (D - 1) * k * k);
  p.nodes = static_cast<int32_t>(1 + std::min<int64_t>(c.i64("total_tokens"), p.candidates));
  p.prefix = static_cast<int32_t>(c.i64("prefix"));
  return p;
}

Case eagle2_mask_case(const Case& c) {
  const Eagle2Params p = eagle2_params(c);
  const Method& m = registry().method("tree_mask");
  Case v;
  v.method = &m;
  v.phase = "build";
  v.dtype = DType::i32;
  v.seed = c.seed;
  v.params = m.schema().complete({{"batch", Value(int64_t{p.batch})},
                                  {"nodes", Value(int64_t{p.nodes})},
                                  {"prefix", Value(int64_t{p.prefix})},
                                  {"max_depth", Value(int64_t{p.depth})}},
                                 "build");
  return v;
}

void add_tree_builder_params(ParamSchema& schema, double min_depth, int64_t vocab, const char* vocab_doc) {
  schema.add({"batch", ParamType::Int, Value(int64_t{2}), {}, 1.0, 4096.0, {}, "trees (one per sequence)"});
  schema.add({"top_k", ParamType::Int, Value(int64_t{10}), {}, 1.0, 32.0, {},
              "k: children per expanded node, and nodes expanded per level"});
  schema.add({"depth", ParamType::Int, Value(int64_t{6}), {}, min_depth, 16.0, {}, "D: levels of drafts below the root"});
  schema.add({"total_tokens", ParamType::Int, Value(int64_t{60}), {}, 1.0, 1023.0, {},
              "T: drafts kept (the best by cumulative log-probability); all of them when T exceeds the candidates"});
  schema.add({"vocab", ParamType::Int, Value(vocab), {}, 2.0, 1048576.0, {}, vocab_doc});
  schema.add({"prefix", ParamType::Int, Value(int64_t{1024}), {}, 0.0, 1e8, {}, "tokens before the tree: the root's position id"});
  schema.rule("top_k <= vocab", [](const Params& p, const std::string&) -> std::string {
    if (p.i64("top_k") <= p.i64("vocab")) return {};
    return cat("top_k=", p.i64("top_k"), " distinct children cannot come from a vocabulary of ", p.i64("vocab"));
  });
}

// Named, not anonymous: unity batches put other spec files' helpers beside these.
namespace eagle2_ref {

constexpr double kEps = 0x1p-23;
constexpr double kNoise = 0.5;  // the logits' noise around G-DIST's profile (inputs)

struct Cand {
  double score = 0;
  int32_t token = 0;
  int32_t parent = -1;  // candidate index, −1: the root
  int32_t depth = 1;
};

// a before b in "best of a set" order.
bool better(const std::vector<Cand>& cand, int64_t a, int64_t b) {
  return cand[a].score > cand[b].score || (cand[a].score == cand[b].score && a < b);
}

double band(const Cand& c, double ln_v) {
  return kEps * ((3.0 + c.depth / 2.0) * std::fabs(c.score) + c.depth * (2.5 + ln_v / 2.0));
}

bool ancestor_of(const std::vector<Cand>& cand, int64_t a, int64_t c) {
  for (int64_t j = cand[c].parent; j >= 0; j = cand[j].parent)
    if (j == a) return true;
  return false;
}

// Whether fp32 may order a and c otherwise than fp64 does.
bool undecided(const std::vector<Cand>& cand, int64_t a, int64_t c, double ln_v) {
  if (std::fabs(cand[a].score - cand[c].score) > band(cand[a], ln_v) + band(cand[c], ln_v)) return false;
  return cand[a].parent != cand[c].parent && !ancestor_of(cand, a, c) && !ancestor_of(cand, c, a);
}

struct RowTree {
  std::vector<int32_t> parents, tokens;
  bool boundary = false;
  double value = 0;  // Σ exp(score) over the drafts kept
};

// One tree from its rows of logits (fp64 log_softmax, exact top k on the logits).
RowTree build_row(const HostTensor& logits, int64_t b, const Eagle2Params& p, int32_t root_token) {
  const int64_t k = p.top_k, D = p.depth, V = p.vocab, C = p.candidates;
  const double ln_v = std::log(static_cast<double>(V));
  std::vector<double> z(static_cast<size_t>(V));
  std::vector<int32_t> order(static_cast<size_t>(V));
  // Row q's top k: (token, ℓ) by logit descending, token ascending.
  const auto top = [&](int64_t q, std::vector<int32_t>& tok, std::vector<double>& ell) {
    logits.get_row((b * p.slots + q) * V, V, z.data());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int32_t x, int32_t y) { return z[x] > z[y] || (z[x] == z[y] && x < y); });
    const double m = z[order[0]];
    double s = 0;
    for (int64_t x = 0; x < V; ++x) s += std::exp(z[x] - m);
    const double lse = std::log(s);
    tok.assign(order.begin(), order.begin() + k);
    ell.resize(static_cast<size_t>(k));
    for (int64_t r = 0; r < k; ++r) ell[r] = (z[tok[r]] - m) - lse;
  };

  RowTree t;
  std::vector<Cand> cand(static_cast<size_t>(C));
  std::vector<int32_t> tok;
  std::vector<double> ell;
  top(0, tok, ell);
  for (int64_t r = 0; r < k; ++r) cand[r] = {std::min(0.0, ell[r]), tok[r], -1, 1};
  std::vector<int64_t> frontier;
  for (int64_t level = 1; level < D; ++level) {
    // The best k of this level, in order; any other within the band of one of them is an event.
    const int64_t start = eagle2_level_start(k, level), count = level == 1 ? k : k * k;
    std::vector<int64_t> idx(static_cast<size_t>(count));
    std::iota(idx.begin(), idx.end(), start);
    std::sort(idx.begin(), idx.end(), [&](int64_t a, int64_t c) { return better(cand, a, c); });
    frontier.assign(idx.begin(), idx.begin() + k);
    for (int64_t i = 0; i < k && !t.boundary; ++i)
      for (int64_t j = i + 1; j < count && !t.boundary; ++j) t.boundary = undecided(cand, idx[i], idx[j], ln_v);
    const int64_t next = eagle2_level_start(k, level + 1);
    for (int64_t s = 0; s < k; ++s) {
      top(1 + (level - 1) * k + s, tok, ell);
      const Cand& parent = cand[frontier[s]];
      for (int64_t r = 0; r < k; ++r)
        cand[next + s * k + r] = {std::min(parent.score, parent.score + ell[r]), tok[r], static_cast<int32_t>(frontier[s]),
                                  static_cast<int32_t>(level + 1)};
    }
  }

  // The selection, and the events at its edge.
  const int64_t keep = p.nodes - 1;
  std::vector<int64_t> idx(static_cast<size_t>(C));
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](int64_t a, int64_t c) { return better(cand, a, c); });
  // Pairs in sorted order: a deeper or lower score only widens the band by ε·(3 + D/2) per unit
  // of score, far below the unit the gap grows by, so each scan stops at the first pair whose gap
  // exceeds the widest band a depth-D candidate at that score could have.
  const auto widest = [&](double s) { return kEps * ((3.0 + D / 2.0) * std::fabs(s) + D * (2.5 + ln_v / 2.0)); };
  for (int64_t i = keep - 1; i >= 0 && keep < C && !t.boundary; --i) {
    if (cand[idx[i]].score - cand[idx[keep]].score > widest(cand[idx[i]].score) + widest(cand[idx[keep]].score)) break;
    for (int64_t j = keep; j < C && !t.boundary; ++j) {
      if (cand[idx[i]].score - cand[idx[j]].score > widest(cand[idx[i]].score) + widest(cand[idx[j]].score)) break;
      t.boundary = undecided(cand, idx[i], idx[j], ln_v);
    }
  }
  std::vector<int64_t> chosen(idx.begin(), idx.begin() + keep);
  std::sort(chosen.begin(), chosen.end());
  std::vector<int32_t> node_of(static_cast<size_t>(C), -1);
  t.parents.assign(static_cast<size_t>(p.nodes), -1);
  t.tokens.assign(static_cast<size_t>(p.nodes), root_token);
  for (int64_t i = 0; i < keep; ++i) {
    const int64_t c = chosen[i];
    node_of[c] = static_cast<int32_t>(i + 1);
    const int32_t par = cand[c].parent < 0 ? 0 : node_of[cand[c].parent];
    ATTNBENCH_ASSERT(par >= 0, "eagle2_tree: candidate ", c, " selected without its parent ", cand[c].parent);
    t.parents[i + 1] = par;
    t.tokens[i + 1] = cand[c].token;
    t.value += std::exp(cand[c].score);
  }
  return t;
}

}  // namespace eagle2_ref

namespace {

class Eagle2Tree final : public Method {
 public:
  Eagle2Tree() {
    add_tree_builder_params(schema_, 1.0, 32000, "V: the draft's vocabulary");
    schema_.add({"dist", ParamType::String, Value(std::string("zipf")), {}, {}, {}, {"zipf", "peaked", "flat", "bimodal", "ties"},
                 "shape of each row's draft distribution (G-DIST): ties plants equal logits"});
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const Eagle2Params p = eagle2_params(c);
    const int64_t B = p.batch, n = p.nodes;
    const CheckClass cls = CheckClass::SEMI;
    OutputDecl tokens{"tokens", DType::i32, {B, n}, cls};
    tokens.doc = "tokens [batch, nodes]: node 0 the root token, then the drafts in creation order";
    OutputDecl parents{"parents", DType::i32, {B, n}, cls};
    parents.doc = "parents [batch, nodes]: each node's parent (-1 at the root), nodes = 1 + min(total_tokens, candidates)";
    std::vector<OutputDecl> out{tokens, parents};
    for (OutputDecl d : registry().method("tree_mask").outputs(eagle2_mask_case(c))) {
      d.cls = cls;
      out.push_back(d);
    }
    OutputDecl boundary{"boundary", DType::i32, {B}, CheckClass::SEMI};
    boundary.check_only = true;
    boundary.doc = "boundary [batch]: 1 where two scores fp32 may order otherwise decide the frontier or the selection";
    out.push_back(boundary);
    return out;
  }

  TensorMap inputs(const Case& c) const override {
    const Eagle2Params p = eagle2_params(c);
    const int64_t B = p.batch, S = p.slots, V = p.vocab;
    const DistShape shape = parse_dist_shape(c.str("dist"));
    HostTensor logits("draft_logits", DType::f32, {B, S, V}), root("root_token", DType::i32, {B});
    // G-DIST's shapes repeat one profile of values per row (zipf: every row the same sorted
    // probabilities), which would tie cousins' scores exactly; a normal of deviation kNoise per
    // logit makes rows differ as a draft's do. `ties` keeps its planted equal logits.
    const PhiloxStream noise(c.seed, "draft_logits.noise", kDomainInputs);
    const double sd = shape == DistShape::ties ? 0.0 : eagle2_ref::kNoise;
    harness_pool().parallel_for(B * S, [&](int64_t begin, int64_t end) {
      for (int64_t slot = begin; slot < end; ++slot) {
        const std::vector<double> q = gdist(shape, "draft_logits", c.seed, slot, V);
        for (int64_t x = 0; x < V; ++x) {
          const double z = detmath::log(q[x]) + (sd > 0 ? sd * noise.normal(static_cast<uint64_t>(slot * V + x)) : 0.0);
          logits.set(slot * V + x, z);
        }
      }
    }, 1);
    const PhiloxStream draws(c.seed, "root_token", kDomainInputs);
    for (int64_t b = 0; b < B; ++b)
      root.set(b, std::min<double>(V - 1, std::floor(draws.uniform_f64(static_cast<uint64_t>(b)) * V)));
    TensorMap in;
    in.emplace("draft_logits", std::move(logits));
    in.emplace("root_token", std::move(root));
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const Eagle2Params p = eagle2_params(c);
    const int64_t B = p.batch, n = p.nodes, W = (n + 31) / 32, L = p.depth + 1;
    HostTensor tokens("tokens", DType::i32, {B, n}), parents("parents", DType::i32, {B, n});
    HostTensor mask("mask", DType::i32, {B, n, W}), depth("depth", DType::i32, {B, n}), pos("position_ids", DType::i32, {B, n});
    HostTensor leaves("n_leaves", DType::i32, {B}), retrieve("retrieve", DType::i32, {B, n, L}), boundary("boundary", DType::i32, {B});
    const HostTensor &logits = in.at("draft_logits"), &root = in.at("root_token");
    harness_pool().parallel_for(B, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const eagle2_ref::RowTree t = eagle2_ref::build_row(logits, b, p, static_cast<int32_t>(root.get(b)));
        const TreeLayout lay = tree_layout(t.parents, p.prefix, p.depth);
        for (int64_t i = 0; i < n; ++i) {
          tokens.set(b * n + i, t.tokens[i]);
          parents.set(b * n + i, t.parents[i]);
          depth.set(b * n + i, lay.depth[i]);
          pos.set(b * n + i, lay.position_ids[i]);
        }
        for (int64_t w = 0; w < n * W; ++w) mask.set(b * n * W + w, static_cast<double>(static_cast<int32_t>(lay.mask[w])));
        for (int64_t e = 0; e < n * L; ++e) retrieve.set(b * n * L + e, lay.retrieve[e]);
        leaves.set(b, static_cast<double>(lay.leaves));
        boundary.set(b, t.boundary ? 1 : 0);
      }
    });
    Reference ref;
    for (HostTensor* t : {&tokens, &parents, &mask, &depth, &pos, &leaves, &retrieve, &boundary})
      ref.tensors.emplace(t->name(), std::move(*t));
    return ref;
  }

  // Rows without a boundary event: every output equal to the reference's. Rows with one: excluded
  // and counted, but the impl's tree must be a tree and its layout tree_build.h's of its parents.
  CheckReport check(const Case& c, const TensorMap&, const Reference& ref, const TensorMap& got) const override {
    const Eagle2Params p = eagle2_params(c);
    const int64_t B = p.batch, n = p.nodes, W = (n + 31) / 32, L = p.depth + 1;
    TensorMap want;
    for (const auto& [name, t] : ref.tensors) want.emplace(name, t.clone());
    int64_t events = 0;
    std::string bad_tree;
    for (int64_t b = 0; b < B; ++b) {
      if (ref.tensors.at("boundary").get(b) == 0) continue;
      ++events;
      std::vector<int32_t> par(static_cast<size_t>(n));
      bool valid = true;
      for (int64_t i = 0; i < n; ++i) {
        par[i] = static_cast<int32_t>(got.at("parents").get(b * n + i));
        valid = valid && (i == 0 ? par[i] == -1 : par[i] >= 0 && par[i] < i);
        want.at("tokens").set(b * n + i, got.at("tokens").get(b * n + i));
        want.at("parents").set(b * n + i, par[i]);
      }
      if (!valid) {
        if (bad_tree.empty()) bad_tree = cat("row ", b, " (a boundary event) holds no tree: its parents are not in creation order");
        continue;
      }
      const TreeLayout lay = tree_layout(par, p.prefix, p.depth);
      for (int64_t i = 0; i < n; ++i) {
        want.at("depth").set(b * n + i, lay.depth[i]);
        want.at("position_ids").set(b * n + i, lay.position_ids[i]);
      }
      for (int64_t w = 0; w < n * W; ++w) want.at("mask").set(b * n * W + w, static_cast<double>(static_cast<int32_t>(lay.mask[w])));
      for (int64_t e = 0; e < n * L; ++e) want.at("retrieve").set(b * n * L + e, lay.retrieve[e]);
      want.at("n_leaves").set(b, static_cast<double>(lay.leaves));
    }
    CheckReport report;
    for (const OutputDecl& d : outputs(c)) {
      if (d.check_only) continue;
      OutputCheck o = check_exact(d, want.at(d.name), got.at(d.name), d.length.empty() ? nullptr : &got.at(d.length));
      o.cls = d.cls;
      if (d.name == "parents" && !bad_tree.empty()) {
        o.pass = false;
        o.message = bad_tree;
      }
      o.metrics["n_boundary_cases"] = events;
      report.outputs.push_back(std::move(o));
    }
    return report;
  }

  Work work(const Case& c) const override {
    const Eagle2Params p = eagle2_params(c);
    const double rows = double{1.0} * p.batch * p.slots, Bn = double{1.0} * p.batch * p.nodes;
    Work w;
    w.flops = 4 * rows * p.vocab;  // per logit: a compare, a subtraction, an exp and an add
    // Every logit read once; the root tokens read; the tree's outputs written (tree_mask's work's).
    w.bytes = 4 * rows * p.vocab + 4.0 * p.batch + 8 * Bn + 4 * Bn * ((p.nodes + 31) / 32) + 8 * Bn + 4.0 * p.batch +
              4 * Bn * (p.depth + 1);
    w.bound = Bound::read;
    return w;
  }

  // tree_value_mean: EAGLE-2's value of a tree, Σ exp(score) over its drafts — the expected number
  // of accepted drafts were the target the draft — of the fp64 reference's trees (the impl's are
  // the same but in rows with a boundary event, whose choices differ within the band).
  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override {
    const Eagle2Params p = eagle2_params(c);
    std::vector<double> value(static_cast<size_t>(p.batch));
    harness_pool().parallel_for(p.batch, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b)
        value[b] = eagle2_ref::build_row(in.at("draft_logits"), b, p, static_cast<int32_t>(in.at("root_token").get(b))).value;
    });
    double total = 0;
    for (double v : value) total += v;  // in row order: the thread count changes no bit
    Json q = tree_shape_figures(out, p.batch, p.nodes);
    q["candidates"] = p.candidates;
    q["tree_value_mean"] = total / p.batch;
    return q;
  }

  // The mask stage alone, over a tree of the same size and depth.
  std::vector<RelatedCase> companions(const Case& c) const override {
    const Eagle2Params p = eagle2_params(c);
    return {RelatedCase{"mask_stage", "tree_mask", "build",
                        {{"batch", Value(int64_t{p.batch})},
                         {"nodes", Value(int64_t{p.nodes})},
                         {"prefix", Value(int64_t{p.prefix})},
                         {"max_depth", Value(int64_t{p.depth})}},
                        DType::i32}};
  }

 private:
  MethodInfo info_{.name = "eagle2_tree",
                   .family = "decoding",
                   .summary = "EAGLE-2's dynamic draft tree: top-k expansion by cumulative log-probability, the best total_tokens kept",
                   .catalog_id = "C-EAGLE2-DYNTREE",
                   .paper = "Li et al. 2024, EAGLE-2: Faster Inference of Language Models with Dynamic Draft Trees",
                   .spec_version = 1,
                   .dtypes = {DType::f32}};
  ParamSchema schema_;
};

}  // namespace
}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::Eagle2Tree);
