#include "scored_selection.h"

#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_set.h"
#include "attnbench/error.h"
#include "attnbench/replay.h"
#include "attnbench/thread_pool.h"
#include "compacted_cache.h"
#include "sparse_step.h"

namespace attnbench::kvcomp {

namespace {
const ScoredSelection& scored_selection(const Case& c) {
  const auto* m = dynamic_cast<const ScoredSelection*>(c.method);
  ATTNBENCH_ASSERT(m, c.method_name(), " is not a scored-selection method");
  return *m;
}
}  // namespace

SelectionParams selection_params(const Case& c) { return scored_selection(c).selection(c); }

std::vector<int32_t> planned_row_budgets(const Case& c) {
  const ScoredSelection& m = scored_selection(c);
  if (m.policy() == BudgetPolicy::uniform) return {};
  if (m.policy() == BudgetPolicy::head_floor) {  // the forced tokens, until the across stage counts the rest
    const SelectionParams s = m.selection(c);
    return std::vector<int32_t>(cache_rows(s), s.sinks + s.recent);
  }
  const std::vector<int64_t> kept = m.kept_counts(c);
  return {kept.begin(), kept.end()};
}

int64_t merged_slots(const Case& c) { return scored_selection(c).merge_rule(c).slots; }

bool selection_cache_on(const Case& c) { return scored_selection(c).selection_cache(c).on; }

float selection_cache_threshold(const Case& c) { return static_cast<float>(scored_selection(c).selection_cache(c).threshold); }

bool scores_needed(const Case& c) {
  const ScoredSelection& m = scored_selection(c);
  const SelectionParams s = m.selection(c);
  if (!scores_needed(s)) return false;
  if (m.policy() != BudgetPolicy::per_row) return true;
  for (const int64_t kept : m.kept_counts(c)) {
    const int32_t k = top_k_of(s, static_cast<int32_t>(kept));
    if (k > 0 && k < s.candidates) return true;  // a row that ranks
  }
  return false;  // every row keeps none or all of its candidates
}

ScoredSelection::ScoredSelection(MethodInfo info, ScoreScope scope, BudgetPolicy policy)
    : info_(std::move(info)), scope_(scope), policy_(policy) {
  info_.family = "kvcomp";
  if (info_.dtypes.empty()) info_.dtypes = {DType::f32, DType::f16, DType::bf16};
  add_cache_params(schema_);
}

void ScoredSelection::add_n_future() {
  schema_.add({"n_future", ParamType::Int, Value(int64_t{16}), {}, 0.0, 4096.0, {},
               "held-out later queries for quality (not the window that chose the keys)"});
}

void ScoredSelection::add_layer(int64_t min_layers) {
  schema_.add({"layer", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1023.0, {}, "this layer's index"});
  schema_.add({"n_layers", ParamType::Int, Value(int64_t{32}), {}, static_cast<double>(min_layers), 1024.0, {},
               "layers in the model"});
  schema_.rule("layer < n_layers", [](const Params& p, const std::string&) -> std::string {
    if (p.i64("layer") < p.i64("n_layers")) return {};
    return cat("layer=", p.i64("layer"), " is not a layer of n_layers=", p.i64("n_layers"));
  });
}

int64_t ScoredSelection::budget(const Case& c) const {
  if (policy_ != BudgetPolicy::per_row) return c.i64("budget");
  const std::vector<int64_t> kept = row_budgets(c);
  double sum = 0;
  for (const int64_t k : kept) sum += static_cast<double>(k);
  return static_cast<int64_t>(std::nearbyint(sum / static_cast<double>(kept.size())));
}

int64_t ScoredSelection::capacity(const Case& c) const {
  if (policy_ == BudgetPolicy::per_row) {
    const std::vector<int64_t> kept = row_budgets(c);
    return std::max<int64_t>(1, *std::max_element(kept.begin(), kept.end()));
  }
  if (policy_ != BudgetPolicy::head_floor) return budget(c);
  // The most one row can take: its floor and every other row's share of the rest.
  const Keep k = keep(c);
  const int64_t T = c.i64("kv_len"), forced = k.sinks + k.recent, C = std::max<int64_t>(0, T - forced);
  const int64_t per_row = std::clamp<int64_t>(budget(c) - forced, 0, C);
  const int64_t floor = std::clamp<int64_t>(floor_candidates(c), 0, per_row);
  return std::min(T, forced + std::min(C, floor + c.i64("kv_heads") * (per_row - floor)));
}

CompactedCache ScoredSelection::compacted(const Case& c) const {
  const SelectionParams s = selection(c);
  const int64_t kept = policy_ == BudgetPolicy::uniform ? s.kept : std::min<int64_t>(budget(c), s.kv_len);
  return {s.batch, s.q_heads, s.kv_heads, s.head_dim, s.kv_len, s.capacity, kept, c.i64("n_future"),
          policy_ != BudgetPolicy::uniform};
}

SelectionParams ScoredSelection::selection(const Case& c) const {
  const Keep k = keep(c);
  SelectionParams s{};
  s.batch = static_cast<int32_t>(c.i64("batch"));
  s.q_heads = static_cast<int32_t>(c.i64("q_heads"));
  s.kv_heads = static_cast<int32_t>(c.i64("kv_heads"));
  s.group = s.q_heads / s.kv_heads;
  s.head_dim = static_cast<int32_t>(c.i64("head_dim"));
  s.kv_len = static_cast<int32_t>(c.i64("kv_len"));
  s.capacity = static_cast<int32_t>(capacity(c));
  s.shared_scores = scope_ == ScoreScope::per_sequence;
  s.row_budgets = policy_ != BudgetPolicy::uniform;
  s.elem_bytes = static_cast<int32_t>(dtype_size(c.dtype));
  s.sparse_step = selection_only() ? 1 : 0;
  const int64_t T = s.kv_len, recent = k.recent, forced = k.sinks + recent;
  const bool keep_all = forced >= T || (policy_ != BudgetPolicy::per_row && budget(c) >= T);
  if (keep_all) {
    s.sinks = s.kept = s.kv_len;  // every token is forced: nothing to score
    return s;
  }
  s.sinks = static_cast<int32_t>(k.sinks);
  s.recent = static_cast<int32_t>(recent);
  s.candidates = static_cast<int32_t>(T - forced);
  if (policy_ == BudgetPolicy::uniform) {
    s.kept = static_cast<int32_t>(budget(c));
    s.top_k = static_cast<int32_t>(budget(c) - forced);
    ATTNBENCH_ASSERT(s.top_k >= 0, c.id(), ": the budget is smaller than the forced tokens (a schema rule must refuse it)");
  }
  if (policy_ == BudgetPolicy::head_floor) {
    s.across_heads = 1;
    s.top_k = static_cast<int32_t>(std::clamp<int64_t>(budget(c) - forced, 0, s.candidates));
    s.floor = static_cast<int32_t>(std::clamp<int64_t>(floor_candidates(c), 0, s.top_k));
  }
  return s;
}

void ScoredSelection::add_decode_step() {
  info_.phases = {"prefill", "decode"};
  add_step_rules(schema_);
}

StepRule ScoredSelection::step_rule(const Case& c) const {
  ATTNBENCH_ASSERT(false, c.method_name(), " has a decode phase but no step_rule()");
  return {};
}

StepSpec ScoredSelection::step_spec(const Case& c) const {
  const StepRule rule = step_rule(c);
  StepSpec sp{};
  StepParams& s = sp.s;
  s.batch = static_cast<int32_t>(c.i64("batch"));
  s.q_heads = static_cast<int32_t>(c.i64("q_heads"));
  s.kv_heads = static_cast<int32_t>(c.i64("kv_heads"));
  s.group = s.q_heads / s.kv_heads;
  s.head_dim = static_cast<int32_t>(c.i64("head_dim"));
  s.slots = static_cast<int32_t>(budget(c) + 1);
  s.kv_len = static_cast<int32_t>(c.i64("kv_len"));
  s.recent = static_cast<int32_t>(std::clamp<int64_t>(rule.recent, 1, budget(c)));
  s.shared_scores = scope_ == ScoreScope::per_sequence;
  s.accumulate = rule.accumulate;
  s.visible_mean = rule.visible_mean;
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  sp.gkv = gkv(c);
  return sp;
}

StepParams step_params(const Case& c) { return scored_selection(c).step_spec(c).s; }

TensorMap ScoredSelection::inputs(const Case& c) const {
  if (c.phase == "decode") return step_inputs(step_spec(c), c.dtype, c.seed);
  TensorMap in = prefill_inputs(c);
  if (selection_only()) {  // the step's query: the window's last (sparse_step.h)
    in.emplace("q", decode_query(in.at("q_obs"), c.dtype));
    in.erase("q_obs");
  }
  if (const SelectionCacheRule cache = selection_cache(c); cache.on) {
    // The cached query, and the selection it made one step earlier: its vote over this cache's
    // candidates but the newest, the top top_k by the tie rule.
    const SelectionParams s = selection(c);
    in.emplace("q_cached", plant_cached_query(s, in.at("q"), cache.similarity, c.dtype, c.seed));
    // The score function reads the step's query as "q": the cached one stands in for it meanwhile.
    HostTensor q = std::move(in.at("q"));
    in.at("q") = in.at("q_cached").clone();
    const int64_t C = s.candidates, K = s.top_k;
    HostTensor topk("topk_cached", DType::i32, {score_rows(s), K});
    harness_pool().parallel_for(score_rows(s), [&](int64_t begin, int64_t end) {
      std::vector<double> scores(C);
      std::vector<int32_t> order(C), chosen(K);
      for (int64_t r = begin; r < end; ++r) {
        score(c, in, r, scores.data());
        scores[C - 1] = -INFINITY;
        select_top_k(scores.data(), C, K, order.data(), chosen.data());
        for (int64_t i = 0; i < K; ++i) topk.set(r * K + i, static_cast<double>(s.sinks + chosen[i]));
      }
    });
    in.at("q") = std::move(q);
    in.emplace("topk_cached", std::move(topk));
  }
  return in;
}

TensorMap ScoredSelection::prefill_inputs(const Case& c) const {
  TensorMap in = generate_gkv(gkv(c), c.dtype, c.seed);
  if (!reads_window_queries() && !selection_only()) in.erase("q_obs");  // a selection-only step keeps its query
  replay_inputs(c, in);  // before anything derives from them (replays_own_inputs())
  return in;
}

GkvConfig ScoredSelection::gkv(const Case& c) const {
  GkvConfig cfg;
  cfg.batch = c.i64("batch");
  cfg.q_heads = c.i64("q_heads");
  cfg.kv_heads = c.i64("kv_heads");
  cfg.head_dim = c.i64("head_dim");
  cfg.kv_len = c.i64("kv_len");
  cfg.n_obs = 32;
  cfg.n_future = c.i64("n_future");
  return cfg;
}

void ScoredSelection::score(const Case& c, const TensorMap&, int64_t, double*) const {
  ATTNBENCH_ASSERT(false, c.method_name(), " has candidates to rank but no score function");
}

double ScoredSelection::tie_c(const Case& c, const TensorMap&, int64_t) const {
  ATTNBENCH_ASSERT(false, c.method_name(), " ranks candidates but declares no SET tie band");
  return 0;
}

std::vector<int64_t> ScoredSelection::row_budgets(const Case& c) const {
  ATTNBENCH_ASSERT(false, c.method_name(), " has per-row budgets but no row_budgets()");
  return {};
}

namespace {

// The chosen candidates (0-based within the candidates) of every row, ascending.
using Chosen = std::vector<std::vector<int32_t>>;

// head_floor: per sequence, each row's best `floor` candidates, then the best of the rest across
// the sequence's rows until kv_heads·k are chosen (larger score, then smaller g·C + j).
void choose_across_heads(const SelectionParams& s, const std::vector<double>& scores, int64_t k, int64_t floor,
                         Chosen& chosen) {
  const int64_t H = s.kv_heads, C = s.candidates;
  harness_pool().parallel_for(s.batch, [&](int64_t begin, int64_t end) {
    std::vector<int32_t> order(H * C), top(H * C);
    std::vector<char> taken(H * C);
    std::vector<double> rest(H * C);
    for (int64_t b = begin; b < end; ++b) {
      std::fill(taken.begin(), taken.end(), 0);
      for (int64_t g = 0; g < H; ++g) {
        const double* row = scores.data() + (b * H + g) * C;
        select_top_k(row, C, floor, order.data(), top.data());
        for (int64_t i = 0; i < floor; ++i) taken[g * C + top[i]] = 1;
      }
      for (int64_t f = 0; f < H * C; ++f) rest[f] = taken[f] ? -INFINITY : scores[b * H * C + f];
      // The floors are out of the running (−inf); the next best H·(k − floor) join them.
      const int64_t extra = H * (k - floor);
      select_top_k(rest.data(), H * C, extra, order.data(), top.data());
      for (int64_t i = 0; i < extra; ++i) taken[top[i]] = 1;
      for (int64_t g = 0; g < H; ++g) {
        std::vector<int32_t>& mine = chosen[b * H + g];
        mine.clear();
        for (int64_t j = 0; j < C; ++j)
          if (taken[g * C + j]) mine.push_back(static_cast<int32_t>(j));
      }
    }
  });
}

}  // namespace

std::vector<int64_t> ScoredSelection::kept_counts(const Case& c) const {
  const SelectionParams s = selection(c);
  const int64_t rows = cache_rows(s);
  if (policy_ == BudgetPolicy::uniform || s.candidates == 0) return std::vector<int64_t>(rows, s.kept);
  if (policy_ == BudgetPolicy::per_row) {
    std::vector<int64_t> kept = row_budgets(c);
    ATTNBENCH_ASSERT(static_cast<int64_t>(kept.size()) == rows, c.method_name(), ": row_budgets() gives ", kept.size(),
                     " counts for ", rows, " rows");
    for (int64_t& k : kept) k = clamp_row_budget(s, static_cast<int32_t>(std::clamp<int64_t>(k, 0, s.capacity)));
    return kept;
  }
  ATTNBENCH_ASSERT(false, "kept_counts: head_floor's counts follow from its choice across heads");
  return {};
}

Reference ScoredSelection::reference(const Case& c, const TensorMap& in) const {
  if (c.phase == "decode") return step_reference(step_spec(c), c.dtype, in);
  const SelectionParams s = selection(c);
  const int64_t rows = cache_rows(s), C = s.candidates, T = s.kv_len, cap = s.capacity, d = s.head_dim;
  // Every score row's candidates in fp64, each row sequential.
  // (A positional method never ranks them: each row keeps none or all, scores_needed(c) false.)
  ATTNBENCH_ASSERT(scored() || !scores_needed(c), c.id(), ": a positional method keeps part of a row's candidates");
  std::vector<double> scores(score_rows(s) * C, 0.0);
  if (C > 0 && scored())
    harness_pool().parallel_for(score_rows(s), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) score(c, in, r, scores.data() + r * C);
    });
  // The same scores seen from each cache row (a shared ranking repeated per KV head).
  std::vector<double> row_scores(rows * C);
  for (int64_t r = 0; r < rows; ++r)
    std::copy_n(scores.data() + score_row_of(s, r) * C, C, row_scores.data() + r * C);

  Chosen chosen(rows);
  // The selection cache: rows whose query is close to the cached one take the cached top-k; the
  // fresh selection of every row stays for the check (an impl may decide the other way near θ).
  const SelectionCacheRule cache = selection_cache(c);
  std::vector<double> cos;
  if (cache.on) cos = cache_cosines(s, in);
  if (policy_ == BudgetPolicy::head_floor && C > 0) {
    choose_across_heads(s, row_scores, s.top_k, s.floor, chosen);
  } else {
    const std::vector<int64_t> kept = kept_counts(c);
    harness_pool().parallel_for(rows, [&](int64_t begin, int64_t end) {
      std::vector<int32_t> order(C);
      for (int64_t r = begin; r < end; ++r) {
        chosen[r].resize(kept[r] - s.sinks - s.recent);
        select_top_k(row_scores.data() + r * C, C, static_cast<int64_t>(chosen[r].size()), order.data(), chosen[r].data());
      }
    });
  }

  Reference ref;
  if (cache.on) {
    HostTensor fresh_idx("fresh_idx", DType::i32, {s.batch, s.kv_heads, cap}), fresh_len("fresh_len", DType::i32, {s.batch, s.kv_heads});
    HostTensor hit("cache_hit", DType::i32, {score_rows(s)}), cos_t("cache_cos", DType::f64, {score_rows(s)});
    fresh_idx.fill(-1);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t n = 0;
      for (int64_t j = 0; j < s.sinks; ++j) fresh_idx.set(r * cap + n++, static_cast<double>(j));
      for (int32_t j : chosen[r]) fresh_idx.set(r * cap + n++, static_cast<double>(s.sinks + j));
      for (int64_t j = T - s.recent; j < T; ++j) fresh_idx.set(r * cap + n++, static_cast<double>(j));
      fresh_len.set(r, static_cast<double>(n));
      const int64_t sr = score_row_of(s, r);
      if (cos[sr] >= cache.threshold)
        for (size_t i = 0; i < chosen[r].size(); ++i)
          chosen[r][i] = static_cast<int32_t>(in.at("topk_cached").get(sr * s.top_k + static_cast<int64_t>(i))) - s.sinks;
    }
    for (int64_t sr = 0; sr < score_rows(s); ++sr) {
      hit.set(sr, cos[sr] >= cache.threshold ? 1.0 : 0.0);
      cos_t.set(sr, cos[sr]);
    }
    for (HostTensor* t : {&fresh_idx, &fresh_len, &hit, &cos_t}) ref.tensors.emplace(t->name(), std::move(*t));
  }
  HostTensor idx("kept_idx", DType::i32, {s.batch, s.kv_heads, cap});
  HostTensor len("kept_len", DType::i32, {s.batch, s.kv_heads});
  const int64_t copy_rows = s.sparse_step ? 0 : cap;
  HostTensor k_kept("k_kept", DType::f64, {s.batch, s.kv_heads, copy_rows, d});
  HostTensor v_kept("v_kept", DType::f64, {s.batch, s.kv_heads, copy_rows, d});
  HostTensor all_scores("scores", DType::f64, {s.batch, s.kv_heads, T});
  HostTensor tie("tie_c", DType::f64, {s.batch, s.kv_heads});
  idx.fill(-1);
  all_scores.fill(INFINITY);
  harness_pool().parallel_for(rows, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> kept;
    for (int64_t r = begin; r < end; ++r) {
      kept.clear();
      for (int64_t j = 0; j < s.sinks; ++j) kept.push_back(j);
      for (int32_t j : chosen[r]) kept.push_back(s.sinks + j);
      for (int64_t j = T - s.recent; j < T; ++j) kept.push_back(j);
      len.set(r, static_cast<double>(kept.size()));
      for (size_t i = 0; i < kept.size(); ++i) {
        idx.set(r * cap + static_cast<int64_t>(i), static_cast<double>(kept[i]));
        if (s.sparse_step) continue;  // no compacted copy
        const int64_t src = (r * T + kept[i]) * d, dst = (r * cap + static_cast<int64_t>(i)) * d;
        in.at("k").get_row(src, d, k_kept.data<double>() + dst);
        in.at("v").get_row(src, d, v_kept.data<double>() + dst);
      }
      if (C > 0 && scored()) {
        std::copy_n(row_scores.data() + r * C, C, all_scores.data<double>() + r * T + s.sinks);
        tie.set(r, tie_c(c, in, score_row_of(s, r)));
      }
    }
  });
  ref.tensors.emplace("kept_idx", std::move(idx));
  ref.tensors.emplace("kept_len", std::move(len));
  if (!s.sparse_step) {
    ref.tensors.emplace("k_kept", std::move(k_kept));
    ref.tensors.emplace("v_kept", std::move(v_kept));
  } else {  // the step over the reference's own set (the check recomputes it over the impl's)
    attention::DenseRows o = sparse_step_rows(c, s, in, ref.tensors.at("kept_idx"), ref.tensors.at("kept_len"));
    ref.baseline_err["O"] = max_abs_diff(o.o, o.o_base);
    ref.tensors.emplace("O", std::move(o.o));
  }
  if (const int64_t M = merge_rule(c).slots; M > 0 && !s.sparse_step) {
    const HostTensor &ki = ref.tensors.at("kept_idx"), &kl = ref.tensors.at("kept_len");
    TensorMap merged = merge_evicted(s, M, in, ki, kl, false, c.dtype);
    const TensorMap base = merge_evicted(s, M, in, ki, kl, true, c.dtype);
    for (const char* name : {"k_merged", "v_merged"}) ref.baseline_err[name] = max_abs_diff(merged.at(name), base.at(name));
    for (auto& [name, t] : merged) ref.tensors.emplace(name, std::move(t));
  }
  if (scored()) {
    ref.tensors.emplace("scores", std::move(all_scores));
    ref.tensors.emplace("tie_c", std::move(tie));
  }
  return ref;
}

std::vector<OutputDecl> ScoredSelection::outputs(const Case& c) const {
  if (c.phase == "decode") return step_outputs(step_spec(c), c.dtype);
  const CompactedCache cc = compacted(c);
  std::vector<OutputDecl> decls = compacted_cache_outputs(cc, c.dtype, scored() ? CheckClass::SET : CheckClass::EXACT);
  if (selection_only()) {  // the step's output in place of the compacted copy
    decls.resize(2);
    decls.push_back(sparse_step_output(selection(c), c.dtype));
    if (selection_cache(c).on) decls.push_back(cache_hit_output(selection(c)));
  } else if (const int64_t M = merge_rule(c).slots; M > 0) {
    for (OutputDecl& d : merged_slot_outputs(selection(c), M, c.dtype)) decls.push_back(std::move(d));
  }
  if (!scored()) return decls;
  OutputDecl scores{"scores", DType::f64, {cc.batch, cc.kv_heads, cc.kv_len}, CheckClass::SET};
  scores.check_only = true;
  scores.doc = "scores [batch, kv_heads, kv_len]: fp64 score of each candidate; +inf for forced tokens";
  OutputDecl tie_c{"tie_c", DType::f64, {cc.batch, cc.kv_heads}, CheckClass::SET};
  tie_c.check_only = true;
  tie_c.doc = "tie_c [batch, kv_heads]: c_rel of the SET tie band (methodology.md)";
  decls.push_back(scores);
  decls.push_back(tie_c);
  return decls;
}

namespace {

// head_floor's selection is one set per sequence over (g, j): the kept index g·kv_len + j of each
// of its rows, flattened into [batch, 1, kv_heads·capacity] with lengths Σ_g kept_len, and the
// scores to match, so the SET check compares what the policy chose.
struct Flat {
  HostTensor idx, len;
};
Flat flatten(const HostTensor& idx, const HostTensor& len, int64_t B, int64_t H, int64_t cap, int64_t T) {
  Flat f{HostTensor("kept_idx", DType::i32, {B, 1, H * cap}), HostTensor("kept_len", DType::i32, {B, 1})};
  f.idx.fill(-1);
  for (int64_t b = 0; b < B; ++b) {
    int64_t n = 0;
    for (int64_t g = 0; g < H; ++g)
      for (int64_t i = 0; i < static_cast<int64_t>(len.get(b * H + g)); ++i)
        f.idx.set(b * H * cap + n++, static_cast<double>(g * T) + idx.get((b * H + g) * cap + i));
    f.len.set(b, static_cast<double>(n));
  }
  return f;
}

}  // namespace

CheckReport ScoredSelection::check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const {
  if (c.phase == "decode") return step_check(step_spec(c), c.dtype, in, ref, got);
  const auto decls = outputs(c);
  const OutputDecl &idx_decl = decls[0], &len_decl = decls[1];
  // After the set: the compacted copy's gathers, or a selection-only method's step over its set.
  const auto finish = [&](OutputCheck len_check, OutputCheck idx_check) {
    if (!selection_only()) {
      CheckReport report = check_compacted_cache(decls, in, got, std::move(len_check), std::move(idx_check));
      if (const int64_t M = merge_rule(c).slots; M > 0)
        for (OutputCheck& m : check_merged_slots(selection(c), M, c.dtype, in, got)) report.outputs.push_back(std::move(m));
      return report;
    }
    CheckReport report;
    report.outputs.push_back(std::move(len_check));
    report.outputs.push_back(std::move(idx_check));
    report.outputs.push_back(check_sparse_step(c, selection(c), in, got));
    return report;
  };
  if (selection_cache(c).on) return check_with_cache(c, in, ref, got, finish);
  if (std::optional<OutputCheck> own = check_kept(c, in, ref, got))
    return finish(check_exact(len_decl, ref.tensors.at("kept_len"), got.at("kept_len"), nullptr), std::move(*own));
  if (!scored()) {
    OutputCheck idx = check_exact(idx_decl, ref.tensors.at("kept_idx"), got.at("kept_idx"), &got.at("kept_len"));
    return finish(check_exact(len_decl, ref.tensors.at("kept_len"), got.at("kept_len"), nullptr), std::move(idx));
  }
  const HostTensor& tie_c = ref.tensors.at("tie_c");
  TieBand band;
  if (policy_ != BudgetPolicy::head_floor) {
    for (int64_t r = 0; r < tie_c.numel(); ++r) band.c_rel.push_back(tie_c.get(r));
    OutputCheck idx = check_set(idx_decl, ref.tensors.at("kept_idx"), ref.tensors.at("kept_len"), got.at("kept_idx"),
                                got.at("kept_len"), ref.tensors.at("scores"), band);
    return finish(check_exact(len_decl, ref.tensors.at("kept_len"), got.at("kept_len"), nullptr), std::move(idx));
  }
  // head_floor: per-row lengths follow from the sequence's set, so the set is checked flattened
  // and the lengths only for their sum per sequence.
  const SelectionParams s = selection(c);
  const int64_t B = s.batch, H = s.kv_heads, cap = s.capacity, T = s.kv_len;
  const Flat want = flatten(ref.tensors.at("kept_idx"), ref.tensors.at("kept_len"), B, H, cap, T);
  const Flat have = flatten(got.at("kept_idx"), got.at("kept_len"), B, H, cap, T);
  HostTensor scores("scores", DType::f64, {B, 1, H * T});
  for (int64_t i = 0; i < scores.numel(); ++i) scores.set(i, ref.tensors.at("scores").get(i));
  for (int64_t b = 0; b < B; ++b) {
    double worst = 0;
    for (int64_t g = 0; g < H; ++g) worst = std::max(worst, tie_c.get(b * H + g));
    band.c_rel.push_back(worst);
  }
  OutputDecl flat_decl = idx_decl;
  flat_decl.shape = {B, 1, H * cap};
  OutputCheck idx = check_set(flat_decl, want.idx, want.len, have.idx, have.len, scores, band);
  OutputDecl flat_len = len_decl;
  flat_len.shape = {B, 1};
  OutputCheck lengths = check_exact(flat_len, want.len, have.len, nullptr);
  return finish(std::move(lengths), std::move(idx));
}

CheckReport ScoredSelection::check_with_cache(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got,
                                              const std::function<CheckReport(OutputCheck, OutputCheck)>& finish) const {
  const SelectionParams s = selection(c);
  const SelectionCacheRule cache = selection_cache(c);
  const auto decls = outputs(c);
  const HostTensor &hit = got.at("cache_hit"), &cos = ref.tensors.at("cache_cos");
  const double band = cache_cosine_band(s) * std::max(1.0, std::abs(cache.threshold));
  OutputCheck hit_check{"cache_hit", CheckClass::SEMI, true, ""};
  int64_t near = 0;
  std::vector<char> impl_hit(score_rows(s), 0);
  for (int64_t sr = 0; sr < score_rows(s); ++sr) {
    const double v = hit.get(sr), want = cos.get(sr) >= cache.threshold ? 1 : 0;
    const bool at_threshold = std::abs(cos.get(sr) - cache.threshold) <= band;
    near += at_threshold;
    if ((v != 0 && v != 1) || (v != want && !at_threshold)) {
      if (hit_check.pass)
        hit_check.message = cat("cache_hit[", sr, "] = ", short_num(v), ": cos(q, q_cached) = ", short_num(cos.get(sr)), " against threshold ",
                                short_num(cache.threshold), " (band ", short_num(band), ") decides ", want);
      hit_check.pass = false;
    }
    impl_hit[sr] = v == 1;
  }
  hit_check.metrics["near_threshold"] = near;
  // The set each row must have kept by the impl's own decision: the fresh selection (SET with the
  // scorer's band), or on a hit the cached one (scores that allow no exchange).
  HostTensor want_idx = ref.tensors.at("fresh_idx").clone(), want_len = ref.tensors.at("fresh_len").clone();
  HostTensor scores = ref.tensors.at("scores").clone();
  const int64_t cap = s.capacity, T = s.kv_len;
  for (int64_t r = 0; r < cache_rows(s); ++r) {
    const int64_t sr = score_row_of(s, r);
    if (!impl_hit[sr]) continue;
    int64_t n = 0;
    for (int64_t j = 0; j < s.sinks; ++j) want_idx.set(r * cap + n++, static_cast<double>(j));
    for (int64_t j = s.sinks; j < s.sinks + s.candidates; ++j) scores.set(r * T + j, -1e30);
    for (int64_t i = 0; i < s.top_k; ++i) {
      const double j = in.at("topk_cached").get(sr * s.top_k + i);
      want_idx.set(r * cap + n++, j);
      scores.set(r * T + static_cast<int64_t>(j), 1e30);
    }
    for (int64_t j = T - s.recent; j < T; ++j) want_idx.set(r * cap + n++, static_cast<double>(j));
  }
  TieBand tie;
  for (int64_t r = 0; r < cache_rows(s); ++r) tie.c_rel.push_back(ref.tensors.at("tie_c").get(r));
  OutputCheck idx = check_set(decls[0], want_idx, want_len, got.at("kept_idx"), got.at("kept_len"), scores, tie);
  CheckReport report = finish(check_exact(decls[1], want_len, got.at("kept_len"), nullptr), std::move(idx));
  report.outputs.push_back(std::move(hit_check));
  return report;
}

Work ScoredSelection::work(const Case& c) const {
  if (c.phase == "decode") return step_work(step_spec(c), c.dtype);
  const SelectionParams s = selection(c);
  const CompactedCache cc = compacted(c);
  const double es = static_cast<double>(dtype_size(c.dtype)), d = static_cast<double>(s.head_dim);
  const double rows = static_cast<double>(cache_rows(s)), cap = static_cast<double>(s.capacity);
  // Where nothing is chosen by score (every row keeps none or all of its candidates), an ideal
  // implementation scores nothing: the row is its compaction, a copy.
  Work w = scores_needed(c) ? score_work(c) : Work{0, 0, Bound::copy};
  if (s.sparse_step) {  // scoring, then the step over the kept set (no copy)
    const std::vector<int64_t> kept = policy_ == BudgetPolicy::head_floor
                                          ? std::vector<int64_t>(cache_rows(s), cc.kept)
                                          : kept_counts(c);
    const Work step = sparse_step_work(s, kept, c.dtype);
    return {w.flops + step.flops, w.bytes + step.bytes, Bound::read};
  }
  // The compaction: the kept K and V rows read; indices, lengths and the compacted K/V written
  // at full capacity.
  w.bytes += rows * (2 * static_cast<double>(cc.kept) * d * es + cap * 4 + 4 + 2 * cap * d * es);
  if (const int64_t M = merge_rule(c).slots; M > 0)  // the evicted rows read once, the slots written
    w.bytes += rows * (2 * static_cast<double>(s.kv_len - cc.kept) * d * es + static_cast<double>(M) * (2 * d * es + 4));
  return w;
}

Json ScoredSelection::quality(const Case& c, const TensorMap& in, const TensorMap& out) const {
  if (c.phase == "decode") return step_quality(step_spec(c));
  Json q = compacted_cache_quality(compacted(c), c.dtype, in, out, merge_rule(c).lambda);
  if (selection_only()) {
    sparse_step_quality(selection(c), c.dtype, in, out, q);
    // What choosing the set reads per step (the scorer's bytes), beside what the step reads.
    const SelectionParams s = selection(c);
    q["selection_bytes_per_step"] = scores_needed(s) ? score_work(c).bytes : 0.0;
    if (selection_cache(c).on) {  // the cosine reads q and q_cached; a step that hits scores nothing
      const HostTensor& hit = out.at("cache_hit");
      double hits = 0;
      for (int64_t r = 0; r < hit.numel(); ++r) hits += hit.get(r);
      const double rate = hits / static_cast<double>(hit.numel());
      q["cache_hit_rate"] = rate;
      q["selection_bytes_per_step"] = 2.0 * static_cast<double>(in.at("q").bytes()) + (1.0 - rate) * q["selection_bytes_per_step"].get<double>();
    }
  }
  // The point the method was asked for, kvpress's 1 / (1 − compression_ratio): the case's budget
  // is kept tokens per row on average over all that shares it (a layer's heads, a model's layers),
  // where compression_ratio is what this case kept.
  const double T = static_cast<double>(c.i64("kv_len"));
  q["compression_point"] = T / std::min(T, static_cast<double>(c.i64("budget")));
  return q;
}

std::vector<RelatedCase> ScoredSelection::companions(const Case& c) const {
  if (c.phase == "decode") return step_companions(step_spec(c), c.dtype);
  if (selection_only()) return sparse_step_companions(selection(c), budget(c), c.dtype);
  if (const int64_t M = merge_rule(c).slots; M > 0) {
    // The compressed decode reads the merged slots too, with their log-weight bias: bias_decode.
    CompactedCache cc = compacted(c);
    cc.kept += M;
    std::vector<RelatedCase> comp = decode_companions(cc, c.dtype);
    comp[0].method = "bias_decode";
    return comp;
  }
  return decode_companions(compacted(c), c.dtype);
}

void ScoredSelection::pool(const double* in, int64_t n, int64_t kernel, PoolMode mode, double* out) {
  const int64_t r = (kernel - 1) / 2;
  const bool max = mode == pool_max;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t lo = std::max<int64_t>(0, j - r), hi = std::min(n - 1, j + r);
    double acc = max ? -INFINITY : 0.0;
    for (int64_t t = lo; t <= hi; ++t) acc = max ? std::max(acc, in[t]) : acc + in[t];
    out[j] = max ? acc : acc / static_cast<double>(mode == pool_avg_padded ? kernel : hi - lo + 1);
  }
}

double ScoredSelection::max_row_norm(const HostTensor& t, int64_t first, int64_t count, int64_t d) {
  std::vector<double> row(d);
  double best = 0;
  for (int64_t i = first; i < first + count; ++i) {
    t.get_row(i * d, d, row.data());
    double n2 = 0;
    for (double v : row) n2 += v * v;
    best = std::max(best, std::sqrt(n2));
  }
  return best;
}

}  // namespace attnbench::kvcomp
