// jakiro — Jakiro's draft: a two-expert MoE layer whose one forward at the penultimate level also
// gives a contrastive feature, read in parallel as the last level's draft (no forward for it), and
// EAGLE-2's dynamic tree built over the logits. Catalog: C-JAKIRO. Huang et al. 2025, Jakiro:
// Boosting Speculative Decoding with Decoupled Multi-Head via MoE (haiduo/Jakiro, jakiro/model/
// cnets.py: MixtralSparseMoeBlock.forward with two experts, Model.topK_genrate).
//
// Semantics (spec_version 1). Tree b has eagle2_tree's S = 1 + (D − 1)·k slots of draft logits
// (eagle2_tree.cpp: slot 0 the root's, then k frontier slots for each of levels 2..D). The draft
// layer runs on F forward rows x_q = hidden_states[b, q] (q < F): F = S − k with the contrastive
// last stage (the default), F = S with last_stage=forward (EAGLE-2's schedule, the baseline: one
// more forward for the last level). Per row, with d the width (each expert's intermediate size is
// d too, as Jakiro's LlamaMLP):
//   n        = x·g / sqrt(mean(x²) + ε)                         (RMSNorm, g = norm_weight)
//   r        = W_router·n  (4 logits)                             router_logits[b, q]
//   E_e      = W_down,e·(silu(W_gate,e·n) ⊙ W_up,e·n), e ∈ {0, 1}
//   w        = softmax(r₀, r₁);   moe = w₀·E₀ + w₁·E₁
//   hi       = 0 if r₂ > r₃ else 1 (a tie: expert 1), lo the other; w' = softmax(r₂, r₃)
//   con      = w'_hi·E_hi − w'_lo·E_lo
//   features[b, q]     = x + moe                                   (every forward row)
//   features[b, q + k] = x + con        for the last k rows q ≥ F − k, contrastive only
//   draft_logits[b, s] = lm_head·features[b, s]                   (s < S)
// then eagle2_tree over draft_logits and root_token: tokens, parents, mask, depth, position_ids,
// n_leaves, retrieve (eagle2_tree.cpp's semantics, bit for bit its stage on every backend).
// The last k forward rows are the penultimate level's frontier (slots 1 + (D − 3)·k + s): their moe
// features are that level's slots, their contrastive ones the last level's, slot s to slot s.
//
// Precision (the impls' contract, the same-precision baseline's): fp32 arithmetic; n, the experts'
// gate and up outputs, the activation and E_e rounded to the storage dtype, as a half-precision
// forward stores them; r and the logits kept in fp32; a feature computed in fp32 from x and the
// rounded E_e, rounded once.
//
// Inputs: hidden_states [batch, F, d] (uniform, variance 1), norm_weight [d] (uniform in
// [0.5, 1.5)), w_in [4d, d] (expert e's gate rows at 2e·d, its up rows at (2e + 1)·d; variance
// 1/d), w_down [2, d, d] (variance 1/d), w_router [4, d] (variance 4/d: routes that differ),
// lm_head [V, d] (variance 9/d: logits of deviation about 3.4), all in the case dtype; root_token
// [batch] i32 (⌊u·V⌋). Streams: the inputs' names. Synthetic weights and states, as no draft
// model is shipped: the level-by-level dependency of the draft's inputs on the frontier (its
// attention over the tree) is outside the method, as in eagle2_tree.
//
// Check: router_logits, features and draft_logits TOL against the fp64 pipeline with the
// same-precision baseline. A tree whose contrastive route is decided within the router's gate
// (|r₂ − r₃| at most it: the feature's sign flips there) is a boundary event: its features and
// logits are excluded and counted (n_boundary_cases). The tree outputs EXACT against eagle2_tree's
// reference over the impl's own draft_logits (its boundary rows checked for validity, as there):
// the builder is exact given its logits, the logits are TOL.
//
// Choices, and where they differ from Jakiro's code:
//   - The last level's slot s takes the contrastive feature of the penultimate forward's row s, as
//     topK_genrate does (its topk_index_1 rows, paired with the selected frontier by position).
//     The node at slot s is not always that row's child; the parent's row would be the other
//     reading. Same cost either way; this one is what the authors' speedups measure.
//   - hi/lo: the code pairs the larger weight with the expert of the larger logit; for moe that is
//     w₀E₀ + w₁E₁ whatever the order, for con the order is the sign, and a tie makes expert 1 hi
//     (torch.where on r₂ > r₃), kept here.
//   - The code computes in fp16 and rounds after every torch op (w·E, the sums); here the feature
//     is one fp32 expression rounded once (the baseline does the same; within the gate).
//   - Depth and total_tokens count as eagle2_tree's (the code's depth = D − 1, total_tokens + 1);
//     D ≥ 3, so that a penultimate forward exists after the root's (the code's first forward is
//     never the penultimate one).
//   - The draft's attention, its fc over [embedding; hidden] and the input layer norm are outside
//     the method: x stands for the layer's post-attention residual stream. The LM head is the
//     target's, unnormed, as EAGLE's head(out_hidden).
//   - The `threshold` early exit (commented out in the code) is not modelled.
#include <algorithm>
#include <cmath>

#include "attnbench/cases.h"
#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "eagle2_common.h"
#include "gdist.h"
#include "jakiro_common.h"
#include "tree_build.h"

namespace attnbench::decoding {

JakiroParams jakiro_params(const Case& c) {
  const int64_t k = c.i64("top_k"), D = c.i64("depth");
  JakiroParams p{};
  p.batch = static_cast<int32_t>(c.i64("batch"));
  p.top_k = static_cast<int32_t>(k);
  p.hidden = static_cast<int32_t>(c.i64("hidden"));
  p.vocab = static_cast<int32_t>(c.i64("vocab"));
  p.slots = static_cast<int32_t>(1 + (D - 1) * k);
  p.contrastive = c.str("last_stage") == "contrastive" ? 1 : 0;
  p.forward_rows = p.slots - (p.contrastive ? p.top_k : 0);
  p.eps = 1e-6f;
  return p;
}

JakiroProjections jakiro_projections(const JakiroParams& p) {
  const int32_t d = p.hidden, rows = p.batch * p.forward_rows;
  const auto plain = [](int32_t m, int32_t n, int32_t k) {
    projection::ProjectionParams s{};
    s.outer = 1;
    s.inner = 1;
    s.m = m;
    s.n = n;
    s.k = k;
    s.x_row = k;
    s.w_n = k;  // W as [n][k]: Y = X·Wᵀ, a linear layer's weight
    s.w_k = 1;
    s.y_row = n;
    return s;
  };
  JakiroProjections j;
  j.experts_in = plain(rows, 4 * d, d);
  j.router = plain(rows, 4, d);
  j.router.y_f32 = 1;
  j.experts_out = plain(rows, d, d);
  j.experts_out.inner = 2;  // expert e: its activation columns, its W_down, its output columns
  j.experts_out.x_inner = d;
  j.experts_out.x_row = 2 * d;
  j.experts_out.w_inner = d * d;
  j.experts_out.y_inner = d;
  j.experts_out.y_row = 2 * d;
  j.lm_head = plain(p.batch * p.slots, p.vocab, d);
  j.lm_head.y_f32 = 1;
  return j;
}

Case jakiro_tree_case(const Case& c) {
  std::map<std::string, Value> params;
  for (const char* name : {"batch", "top_k", "depth", "total_tokens", "vocab", "prefix"}) params[name] = c.params.at(name);
  return build_case({"eagle2_tree", "", params, "f32", c.seed});
}

// Named, not anonymous: unity batches put other spec files' helpers beside these.
namespace jakiro_ref {

// One forward row's values: fp64, or the fp32 baseline rounding where the impls round.
struct Row {
  std::vector<double> router, moe, con;  // 4, d, d
};

template <typename T>
Row forward_row(const TensorMap& in, int64_t b, int64_t q, const JakiroParams& p, DType dt) {
  constexpr bool kBase = std::is_same_v<T, float>;
  const int64_t d = p.hidden;
  const auto store = [&](T v) -> T { return kBase ? static_cast<T>(round_to(dt, v)) : v; };
  std::vector<T> x(d), g(d), w(d), n(d), act(2 * d), e(2 * d);
  in.at("hidden_states").get_row((int64_t{b} * p.forward_rows + q) * d, d, x.data());
  in.at("norm_weight").get_row(0, d, g.data());
  T ms = 0;
  for (int64_t j = 0; j < d; ++j) ms += x[j] * x[j];
  const T inv = T(1) / std::sqrt(ms / static_cast<T>(d) + static_cast<T>(p.eps));
  for (int64_t j = 0; j < d; ++j) n[j] = store(x[j] * inv * g[j]);
  const auto dot = [&](const HostTensor& W, int64_t row, const std::vector<T>& v, int64_t off) {
    W.get_row(row * d, d, w.data());
    T acc = 0;
    for (int64_t j = 0; j < d; ++j) acc += w[j] * v[off + j];
    return acc;
  };
  Row out;
  out.router.resize(4);
  for (int64_t i = 0; i < 4; ++i) out.router[i] = dot(in.at("w_router"), i, n, 0);
  for (int64_t ex = 0; ex < 2; ++ex)
    for (int64_t j = 0; j < d; ++j) {
      const T gate = store(dot(in.at("w_in"), 2 * ex * d + j, n, 0)), up = store(dot(in.at("w_in"), (2 * ex + 1) * d + j, n, 0));
      act[ex * d + j] = store(gate / (T(1) + std::exp(-gate)) * up);
    }
  for (int64_t ex = 0; ex < 2; ++ex)
    for (int64_t j = 0; j < d; ++j) e[ex * d + j] = store(dot(in.at("w_down"), ex * d + j, act, ex * d));
  const T z[4] = {static_cast<T>(out.router[0]), static_cast<T>(out.router[1]), static_cast<T>(out.router[2]),
                  static_cast<T>(out.router[3])};
  const JakiroRoute<T> route = jakiro_route(z, [](T x) { return std::exp(x); });
  const int64_t hi = route.hi, lo = 1 - hi;
  out.moe.resize(d);
  out.con.resize(d);
  for (int64_t j = 0; j < d; ++j) {
    out.moe[j] = store(x[j] + (route.w0 * e[j] + route.w1 * e[d + j]));
    out.con[j] = store(x[j] + (route.w_hi * e[hi * d + j] - route.w_lo * e[lo * d + j]));
  }
  return out;
}

// Every output row of the pipeline, fp64 (T = double) or the baseline's (T = float).
template <typename T>
void pipeline(const TensorMap& in, const JakiroParams& p, DType dt, HostTensor& router, HostTensor& features, HostTensor& logits) {
  const int64_t d = p.hidden, V = p.vocab, F = p.forward_rows, S = p.slots;
  harness_pool().parallel_for(int64_t{p.batch} * F, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / F, q = t % F;
      const Row r = forward_row<T>(in, b, q, p, dt);
      for (int64_t i = 0; i < 4; ++i) router.set(t * 4 + i, r.router[i]);
      for (int64_t j = 0; j < d; ++j) features.set((b * S + q) * d + j, r.moe[j]);
      if (const int64_t s = jakiro_contrastive_slot(p, q); s >= 0)
        for (int64_t j = 0; j < d; ++j) features.set((b * S + s) * d + j, r.con[j]);
    }
  }, 1);
  const HostTensor& head = in.at("lm_head");
  const int64_t R = int64_t{p.batch} * S;
  std::vector<T> f(static_cast<size_t>(R * d));
  features.get_row(0, R * d, f.data());
  harness_pool().parallel_for(V, [&](int64_t begin, int64_t end) {
    std::vector<T> w(d);
    for (int64_t x = begin; x < end; ++x) {
      head.get_row(x * d, d, w.data());
      for (int64_t row = 0; row < R; ++row) {
        const T* fr = f.data() + row * d;
        T acc = 0;
        for (int64_t j = 0; j < d; ++j) acc += w[j] * fr[j];
        logits.set(row * V + x, acc);
      }
    }
  }, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, d)));
}

// Trees whose contrastive route fp32 may decide otherwise: some last-k row with |r₂ − r₃| within
// the router's gate.
std::vector<char> route_events(const JakiroParams& p, const HostTensor& router, double gate) {
  std::vector<char> event(static_cast<size_t>(p.batch), 0);
  if (!p.contrastive) return event;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t q = p.forward_rows - p.top_k; q < p.forward_rows; ++q) {
      const int64_t t = b * p.forward_rows + q;
      if (std::fabs(router.get(t * 4 + 2) - router.get(t * 4 + 3)) <= gate) event[b] = 1;
    }
  return event;
}

// The trees without an event; all_events when there is none (an empty selection means all).
RowSelection calm_trees(const std::vector<char>& event, bool& all_events) {
  RowSelection sel;
  sel.total_rows = static_cast<int64_t>(event.size());
  for (int64_t b = 0; b < sel.total_rows; ++b)
    if (!event[b]) sel.rows.push_back(b);
  all_events = sel.rows.empty();
  return sel;
}

}  // namespace jakiro_ref

namespace {

class Jakiro final : public Method {
 public:
  Jakiro() {
    add_tree_builder_params(schema_, 3.0, 4096, "V: the LM head's rows");
    schema_.add({"hidden", ParamType::Int, Value(int64_t{256}), {}, 1.0, 16384.0, {},
                 "d: the draft layer's width and each expert's intermediate size"});
    schema_.add({"last_stage", ParamType::String, Value(std::string("contrastive")), {}, {}, {}, {"contrastive", "forward"},
                 "contrastive: the last level from the penultimate forward's contrastive feature (Jakiro); "
                 "forward: one more forward for it (EAGLE-2's schedule, the baseline)"});
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const JakiroParams p = jakiro_params(c);
    const int64_t B = p.batch;
    OutputDecl router{"router_logits", DType::f32, {B, p.forward_rows, 4}, CheckClass::TOL};
    router.doc = "router_logits [batch, forward_rows, 4]: W_router·RMSNorm(x), the moe route (0, 1) and the contrastive one (2, 3)";
    OutputDecl features{"features", c.dtype, {B, p.slots, p.hidden}, CheckClass::TOL};
    features.doc = "features [batch, slots, hidden]: x + moe per forward row, x + con in the last k slots (contrastive)";
    OutputDecl logits{"draft_logits", DType::f32, {B, p.slots, p.vocab}, CheckClass::TOL};
    logits.doc = "draft_logits [batch, slots, vocab]: lm_head·features, eagle2_tree's input";
    std::vector<OutputDecl> out{router, features, logits};
    const Case tc = jakiro_tree_case(c);
    for (OutputDecl& d : tc.method->outputs(tc))
      if (!d.check_only) out.push_back(std::move(d));
    OutputDecl route{"route_boundary", DType::i32, {B}, CheckClass::SEMI};
    route.check_only = true;
    route.doc = "route_boundary [batch]: 1 where a contrastive route (r2 against r3) lies within the router's gate";
    out.push_back(route);
    return out;
  }

  TensorMap inputs(const Case& c) const override {
    const JakiroParams p = jakiro_params(c);
    const int64_t d = p.hidden, V = p.vocab, B = p.batch, F = p.forward_rows;
    const double sd = 1.0 / std::sqrt(static_cast<double>(d));
    TensorMap in;
    // A tensor of uniforms: element i = scale·unit_uniform(u_i) + offset, stream = the tensor's name.
    const auto uniform = [&](const char* name, Shape shape, double scale, double offset, bool centre) {
      HostTensor t(name, c.dtype, shape);
      const PhiloxStream u(c.seed, name, kDomainInputs);
      const int64_t n = t.numel();
      harness_pool().parallel_for(n, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const double v = u.uniform_f64(static_cast<uint64_t>(i));
          t.set(i, offset + scale * (centre ? unit_uniform(v) : v));
        }
      }, 65536);
      in.emplace(name, std::move(t));
    };
    uniform("hidden_states", {B, F, d}, 1.0, 0.0, true);
    uniform("norm_weight", {d}, 1.0, 0.5, false);
    uniform("w_in", {4 * d, d}, sd, 0.0, true);
    uniform("w_down", {2, d, d}, sd, 0.0, true);
    uniform("w_router", {4, d}, 2 * sd, 0.0, true);
    uniform("lm_head", {V, d}, 3 * sd, 0.0, true);
    HostTensor root("root_token", DType::i32, {B});
    const PhiloxStream draws(c.seed, "root_token", kDomainInputs);
    for (int64_t b = 0; b < B; ++b) root.set(b, std::min<double>(V - 1, std::floor(draws.uniform_f64(static_cast<uint64_t>(b)) * V)));
    in.emplace("root_token", std::move(root));
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const JakiroParams p = jakiro_params(c);
    const int64_t B = p.batch, F = p.forward_rows, S = p.slots, d = p.hidden, V = p.vocab;
    HostTensor router("router_logits", DType::f64, {B, F, 4}), features("features", DType::f64, {B, S, d});
    HostTensor logits("draft_logits", DType::f64, {B, S, V});
    HostTensor router32("router_logits", DType::f32, {B, F, 4}), features32("features", c.dtype, {B, S, d});
    HostTensor logits32("draft_logits", DType::f32, {B, S, V});
    jakiro_ref::pipeline<double>(in, p, c.dtype, router, features, logits);
    jakiro_ref::pipeline<float>(in, p, c.dtype, router32, features32, logits32);

    Reference ref;
    ref.baseline_err["router_logits"] = max_abs_diff(router, router32);
    const std::vector<char> event = jakiro_ref::route_events(p, router, router_gate(router, ref.baseline_err["router_logits"]));
    bool all_events = false;
    const RowSelection calm = jakiro_ref::calm_trees(event, all_events);
    ref.baseline_err["features"] = all_events ? 0.0 : max_abs_diff(features, features32, calm);
    ref.baseline_err["draft_logits"] = all_events ? 0.0 : max_abs_diff(logits, logits32, calm);

    // The tree of the fp64 logits (rounded to f32, eagle2_tree's input): what the impl's tree is
    // checked against is the one of its own logits (check()).
    const Case tc = jakiro_tree_case(c);
    TensorMap tin;
    HostTensor l32("draft_logits", DType::f32, {B, S, V});
    for (int64_t i = 0; i < l32.numel(); ++i) l32.set(i, logits.get(i));
    tin.emplace("draft_logits", std::move(l32));
    tin.emplace("root_token", in.at("root_token").clone());
    Reference tree = tc.method->reference(tc, tin);
    HostTensor events("route_boundary", DType::i32, {B});
    for (int64_t b = 0; b < B; ++b) events.set(b, event[b]);
    ref.tensors.emplace("router_logits", std::move(router));
    ref.tensors.emplace("features", std::move(features));
    ref.tensors.emplace("draft_logits", std::move(logits));
    ref.tensors.emplace("route_boundary", std::move(events));
    for (auto& [name, t] : tree.tensors)
      if (name != "boundary") ref.tensors.emplace(name, std::move(t));  // eagle2_tree's own events: check() recomputes them
    return ref;
  }

  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override {
    const JakiroParams p = jakiro_params(c);
    const std::vector<OutputDecl> decls = outputs(c);
    std::vector<char> event(static_cast<size_t>(p.batch));
    int64_t events = 0;
    for (int64_t b = 0; b < p.batch; ++b) events += event[b] = ref.tensors.at("route_boundary").get(b) != 0;
    bool all_events = false;
    const RowSelection calm = jakiro_ref::calm_trees(event, all_events);
    CheckReport report;
    report.outputs.push_back(check_tol(decls[0], ref.tensors.at("router_logits"), got.at("router_logits"),
                                       ref.baseline_err.at("router_logits")));
    for (int i = 1; i <= 2; ++i) {
      OutputCheck o = all_events ? OutputCheck{decls[i].name, CheckClass::TOL, true, "", Json::object()}
                                 : check_tol(decls[i], ref.tensors.at(decls[i].name), got.at(decls[i].name),
                                             ref.baseline_err.at(decls[i].name), calm);
      o.metrics["n_boundary_cases"] = events;
      report.outputs.push_back(std::move(o));
    }
    // The tree: eagle2_tree's check against its reference over the impl's own logits.
    const Case tc = jakiro_tree_case(c);
    TensorMap tin;
    tin.emplace("draft_logits", got.at("draft_logits").clone());
    tin.emplace("root_token", in.at("root_token").clone());
    const Reference tree = tc.method->reference(tc, tin);
    for (OutputCheck& o : tc.method->check(tc, tin, tree, got).outputs) report.outputs.push_back(std::move(o));
    return report;
  }

  Work work(const Case& c) const override {
    const JakiroParams p = jakiro_params(c);
    const double d = p.hidden, rows = double{1.0} * p.batch * p.forward_rows, slots = double{1.0} * p.batch * p.slots;
    const double es = static_cast<double>(dtype_size(c.dtype));
    const Work tree = registry().method("eagle2_tree").work(jakiro_tree_case(c));
    Work w;
    // Per forward row: the experts' 4d² + 2d² multiply-adds and the router's 4d; per slot the head's V·d.
    w.flops = 2 * rows * (6 * d * d + 4 * d) + 2 * slots * p.vocab * d + tree.flops;
    // Weights once, the rows in, features and logits out, then the builder's reads and writes
    // (which include the logits once more).
    w.bytes = es * (6 * d * d + 4 * d + d + double{1.0} * p.vocab * d) + es * rows * d + 4 * rows * 4 + es * slots * d +
              4 * slots * p.vocab + tree.bytes;
    // Every weight meets all B·F (B·S) rows: 51 at EAGLE-2's settings and batch 1, past the
    // ridge of any backend's fp32 FMA units.
    w.bound = Bound::compute;
    return w;
  }

  // The tree's figures as eagle2_tree reports them (over the impl's logits), the draft's schedule
  // (sequential forwards of the draft layer: D − 1 with the contrastive stage, D with a forward for
  // the last level) and the candidate diversity: distinct tokens per level of the kept tree, over
  // the nodes at that level, averaged over levels and trees.
  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override {
    const JakiroParams p = jakiro_params(c);
    const Case tc = jakiro_tree_case(c);
    TensorMap tin;
    tin.emplace("draft_logits", out.at("draft_logits").clone());
    tin.emplace("root_token", in.at("root_token").clone());
    Json q = tc.method->quality(tc, tin, out);
    const int64_t n = eagle2_params(tc).nodes, depth = c.i64("depth");
    double diversity = 0;
    int64_t levels = 0;
    for (int64_t b = 0; b < p.batch; ++b) {
      std::vector<std::vector<int32_t>> at(static_cast<size_t>(depth + 1));
      for (int64_t i = 1; i < n; ++i) {
        const auto lv = static_cast<int64_t>(out.at("depth").get(b * n + i));
        if (lv >= 1 && lv <= depth) at[lv].push_back(static_cast<int32_t>(out.at("tokens").get(b * n + i)));
      }
      for (auto& v : at) {
        if (v.empty()) continue;
        std::sort(v.begin(), v.end());
        diversity += static_cast<double>(std::unique(v.begin(), v.end()) - v.begin()) / static_cast<double>(v.size());
        ++levels;
      }
    }
    q["distinct_token_fraction"] = levels ? diversity / static_cast<double>(levels) : 0.0;
    q["draft_forwards"] = depth - (p.contrastive ? 1 : 0);
    q["forward_rows"] = p.forward_rows;
    return q;
  }

  // The same draft with a forward for the last level: what the contrastive stage saves.
  std::vector<RelatedCase> companions(const Case& c) const override {
    if (c.str("last_stage") != "contrastive") return {};
    std::map<std::string, Value> params(c.params.items().begin(), c.params.items().end());
    params["last_stage"] = Value(std::string("forward"));
    return {RelatedCase{"forward_last_stage", "jakiro", "", params, c.dtype}};
  }

 private:
  // The router's TOL gate, as check_tol forms it.
  static double router_gate(const HostTensor& router, double baseline_err) {
    double m = 0;
    for (int64_t i = 0; i < router.numel(); ++i) m = std::max(m, std::fabs(router.get(i)));
    return tol_gate(DType::f32, baseline_err, m);
  }

  MethodInfo info_{.name = "jakiro",
                   .family = "decoding",
                   .summary = "Jakiro's two-expert MoE draft layer with the contrastive last stage, feeding EAGLE-2's dynamic tree",
                   .catalog_id = "C-JAKIRO",
                   .paper = "Huang et al. 2025, Jakiro: Boosting Speculative Decoding with Decoupled Multi-Head via MoE",
                   .spec_version = 1,
                   .dtypes = {DType::f16, DType::bf16, DType::f32}};
  ParamSchema schema_;
};

}  // namespace
}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::Jakiro);
