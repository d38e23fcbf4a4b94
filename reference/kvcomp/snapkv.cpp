// snapkv — observation-window voting with pooling: one-shot KV-cache compression after prefill.
// Catalog: B-SNAPKV. Paper: Li et al. 2024, SnapKV: LLM Knows What You are Looking for
// Before Generation. Cross-checked against kvpress's SnapKVPress and HeadKV's snapkv_utils.
//
// Semantics (spec_version 1), per sequence b and KV head g, with T = kv_len, w = obs_window,
// G = q_heads/kv_heads, P = T − w prefix tokens, s = 1/√head_dim:
//   1. Window scores. Query i ∈ [0, w) of the window sits at position T − w + i and sees keys
//      j ≤ T − w + i (causal, bottom-right aligned). P_{h,i,j} = softmax_j(s·q_{h,i}·k_j) over ALL
//      its visible keys; a_{h,j} = (1/w)·Σ_i P_{h,i,j} for prefix keys j < P.
//   2. Pooling along j within the prefix: kernel pool_kernel (odd, radius r = (kernel−1)/2, same
//      padding); padded elements are ignored: max over the in-range elements, or their sum divided
//      by their count (avg).
//   3. GQA reduction: score_{g,j} = (1/G)·Σ_{h of g} pooled_{h,j}.
//   4. Selection: the top (budget − w) prefix tokens by the tie rule (larger score first, then
//      smaller index), plus the whole window [P, T); kept indices ascending.
//   budget counts every kept token, the window included: budget ≥ obs_window is a schema rule.
//   When obs_window ≥ kv_len or budget ≥ kv_len everything is kept (indices 0..T−1).
//
// In the family's terms (scored_selection.h): no sinks, the window forced (recent = obs_window),
// the prefix the candidates, score = step 3, a uniform budget per KV head.
//
// Inputs (G-KV, gkv.h; case dtype): q_obs [batch, q_heads, obs_window, head_dim] (the window's
// queries), k, v [batch, kv_heads, kv_len, head_dim], and q_future [batch, q_heads, n_future,
// head_dim], held-out later queries used only by quality().
//
// Outputs, rows (b, g), capacity `budget`, every row's length min(budget, kv_len):
//   kept_idx [batch, kv_heads, budget]            i32   SET, length kept_len, pad −1, ascending
//   kept_len [batch, kv_heads]                    i32   EXACT
//   k_kept   [batch, kv_heads, budget, head_dim]  dtype SET: k gathered at the impl's own kept_idx,
//   v_kept   [batch, kv_heads, budget, head_dim]  dtype      bit for bit; pad 0 beyond kept_len
// Check-only (reference): scores [batch, kv_heads, kv_len] f64 (score_{g,j} for prefix keys, +inf
// for always-kept tokens) and tie_c [batch, kv_heads] f64, the c_rel of the SET tie band
// (docs/methodology.md "SET, SEMI and STAT"):
//   tie_c = 1.02·(2(d+3)·Λ + T + w + pool_kernel + G + 8),  Λ = s·max_{h of g, i}‖q_{h,i}‖·max_j‖k_j‖,
// the relative error bound of an fp32 score (fp32 dot products and softmax, fp32 P) times two.
#include <algorithm>
#include <cmath>

#include "attnbench/error.h"
#include "scored_selection.h"
#include "snapkv_common.h"

namespace attnbench::kvcomp {

SnapkvParams snapkv_params(const Case& c) {
  return {static_cast<int32_t>(c.i64("obs_window")), static_cast<int32_t>((c.i64("pool_kernel") - 1) / 2),
          c.str("pool") == "max" ? 1 : 0, static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.i64("head_dim"))))};
}

namespace {

constexpr int kSpecVersion = 1;

class Snapkv final : public ScoredSelection {
 public:
  Snapkv()
      : ScoredSelection({.name = "snapkv",
                         .summary = "observation-window voting with pooling: keep the top prefix tokens plus the window",
                         .catalog_id = "B-SNAPKV",
                         .paper = "Li et al. 2024, SnapKV: LLM Knows What You are Looking for Before Generation",
                         .spec_version = kSpecVersion}) {
    schema_.add({"obs_window", ParamType::Int, Value(int64_t{32}), {}, 1.0, 1e6, {},
                 "observation window: the last queries, which vote and are always kept"});
    schema_.add({"budget", ParamType::Int, Value(int64_t{256}), {}, 1.0, 1e7, {},
                 "kept tokens per KV head, the observation window included"});
    schema_.add({"pool", ParamType::String, Value(std::string("max")), {}, {}, {}, {"max", "avg"},
                 "pooling of the scores along the keys (avg ignores padding)"});
    schema_.add({"pool_kernel", ParamType::Int, Value(int64_t{7}), {}, 1.0, 1023.0, {}, "pooling kernel (odd, same padding)"});
    add_n_future();
    schema_.add({"ties", ParamType::Bool, Value(false), {}, {}, {}, {},
                 "G-KV plants exact ties: odd prefix positions duplicate the key before them"});
    schema_.rule("obs_window <= budget", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("obs_window") <= p.i64("budget")) return {};
      return cat("budget=", p.i64("budget"), " is smaller than obs_window=", p.i64("obs_window"),
                 "; the budget counts the window, which is always kept");
    });
    schema_.rule("pool_kernel is odd", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("pool_kernel") % 2 == 1) return {};
      return cat("pool_kernel=", p.i64("pool_kernel"), " is even; same padding needs an odd kernel");
    });
  }

 protected:
  Keep keep(const Case& c) const override { return {0, c.i64("obs_window")}; }
  bool reads_window_queries() const override { return true; }

  GkvConfig gkv(const Case& c) const override {
    GkvConfig cfg = ScoredSelection::gkv(c);
    cfg.n_obs = c.i64("obs_window");
    cfg.ties = c.flag("ties");
    return cfg;
  }

  // Steps 1–3 for row (b, g): each query head's window scores, pooled, averaged over the group.
  void score(const Case& c, const TensorMap& in, int64_t row, double* out) const override {
    const SelectionParams s = selection(c);
    const SnapkvParams m = snapkv_params(c);
    const int64_t P = s.candidates, G = s.group;
    std::vector<double> a(P), pooled(P);
    std::fill(out, out + P, 0.0);
    for (int64_t hh = 0; hh < G; ++hh) {
      window_scores(s, m, in, row / s.kv_heads, (row % s.kv_heads) * G + hh, a.data());
      pool(a.data(), P, c.i64("pool_kernel"), m.pool_max != 0, pooled.data());
      for (int64_t j = 0; j < P; ++j) out[j] += pooled[j];
    }
    for (int64_t j = 0; j < P; ++j) out[j] /= static_cast<double>(G);
  }

  // tie_c = 1.02·(2(d+3)·Λ + T + w + pool_kernel + G + 8), Λ = s·max_{h of g, i}‖q_{h,i}‖·max_j‖k_j‖:
  // the relative error bound of an fp32 score (fp32 dot products and softmax, fp32 P) times two.
  double tie_c(const Case& c, const TensorMap& in, int64_t row) const override {
    const SelectionParams s = selection(c);
    const SnapkvParams m = snapkv_params(c);
    const int64_t d = s.head_dim, w = m.obs_window, b = row / s.kv_heads, g = row % s.kv_heads;
    const double lambda = (1.0 / std::sqrt(static_cast<double>(d))) *
                          max_row_norm(in.at("q_obs"), (b * s.q_heads + g * s.group) * w, s.group * w, d) *
                          max_row_norm(in.at("k"), row * s.kv_len, s.kv_len, d);
    return 1.02 * (2.0 * static_cast<double>(d + 3) * lambda +
                   static_cast<double>(s.kv_len + w + c.i64("pool_kernel") + s.group + 8));
  }

  // q·k (2d), exp + sum + accumulate of P (3) per visible (window query, key) pair; pooling and the
  // group mean per prefix key. The window queries and every key are read once.
  Work score_work(const Case& c) const override {
    const SelectionParams s = selection(c);
    const SnapkvParams m = snapkv_params(c);
    const double es = static_cast<double>(dtype_size(c.dtype)), d = static_cast<double>(s.head_dim);
    double pairs = 0;  // per query head
    for (int64_t i = 0; i < m.obs_window; ++i) pairs += static_cast<double>(snapkv_visible_end(s, m, i));
    const double heads = static_cast<double>(int64_t{s.batch} * s.q_heads), P = static_cast<double>(s.candidates);
    Work w;
    w.flops = heads * ((2 * d + 3) * pairs + P * (static_cast<double>(c.i64("pool_kernel")) + 1));
    w.bytes = heads * m.obs_window * d * es + static_cast<double>(cache_rows(s)) * s.kv_len * d * es;
    w.bound = Bound::compute;
    return w;
  }

 private:
  // a_{h,j} of step 1 for one (b, h): the window's mean softmax over the prefix keys, in fp64.
  static void window_scores(const SelectionParams& s, const SnapkvParams& m, const TensorMap& in, int64_t b, int64_t h,
                            double* a) {
    const int64_t d = s.head_dim, P = s.candidates, w = m.obs_window, g = h / s.group;
    const std::vector<double> keys = rows_f64(in.at("k"), (b * s.kv_heads + g) * s.kv_len, s.kv_len, d);
    const std::vector<double> queries = rows_f64(in.at("q_obs"), (b * s.q_heads + h) * w, w, d);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    std::vector<double> logits(s.kv_len);
    std::fill(a, a + P, 0.0);
    for (int64_t i = 0; i < w; ++i) {
      const double* qi = queries.data() + i * d;
      const int64_t end = snapkv_visible_end(s, m, i);
      double mx = -INFINITY;
      for (int64_t j = 0; j < end; ++j) {
        const double* kj = keys.data() + j * d;
        double dot = 0;
        for (int64_t x = 0; x < d; ++x) dot += qi[x] * kj[x];
        logits[j] = scale * dot;
        mx = std::max(mx, logits[j]);
      }
      double l = 0;
      for (int64_t j = 0; j < end; ++j) l += std::exp(logits[j] - mx);
      for (int64_t j = 0; j < P; ++j) a[j] += std::exp(logits[j] - mx) / l;
    }
    for (int64_t j = 0; j < P; ++j) a[j] /= static_cast<double>(w);
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Snapkv);
