#include "snapkv_scorer.h"

#include <algorithm>
#include <cmath>

#include "attnbench/error.h"

namespace attnbench::kvcomp {

SnapkvParams snapkv_params(const Case& c) {
  const auto* m = dynamic_cast<const SnapkvScored*>(c.method);
  ATTNBENCH_ASSERT(m, c.method_name(), " does not score with the SnapKV scorer");
  return m->scorer(c);
}

namespace {

PoolMode pool_mode(const std::string& name) {
  return name == "max" ? pool_max : name == "avg_padded" ? pool_avg_padded : pool_avg;
}

// The window's queries: q_obs, or a selection-only method's decode query q (a window of one).
const HostTensor& window_queries(const TensorMap& in) { return in.count("q_obs") ? in.at("q_obs") : in.at("q"); }

float inv_sqrt_dim(const Case& c) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.i64("head_dim")))); }

// a_{h,j} of step 1 for one (b, h) over the candidates, in fp64.
void window_scores(const SelectionParams& s, const SnapkvParams& m, const TensorMap& in, int64_t b, int64_t h, double* a) {
  const int64_t d = s.head_dim, C = s.candidates, w = m.obs_window, g = h / s.group;
  const std::vector<double> keys = rows_f64(in.at("k"), (b * s.kv_heads + g) * s.kv_len, s.kv_len, d);
  const std::vector<double> queries = rows_f64(window_queries(in), (b * s.q_heads + h) * w, w, d);
  // The scale in fp64: 1/√d exactly where the impls' fp32 scale is its rounding (a method's own
  // scale, tokenselect's raw dot products, is taken as given).
  const double exact = 1.0 / std::sqrt(static_cast<double>(d));
  const double scale = m.scale == static_cast<float>(exact) ? exact : static_cast<double>(m.scale);
  std::vector<double> logits(s.kv_len);
  std::fill(a, a + C, 0.0);
  for (int64_t i = 0; i < w; ++i) {
    const double* qi = queries.data() + i * d;
    const int64_t end = snapkv_visible_end(s, m, i);
    // The softmax's domain: every visible key, or with candidate_softmax the visible candidates.
    const int64_t lo = m.candidate_softmax ? s.sinks : 0, hi = m.candidate_softmax ? std::min(end, int64_t{s.sinks} + C) : end;
    double mx = -INFINITY;
    for (int64_t j = lo; j < hi; ++j) {
      const double* kj = keys.data() + j * d;
      double dot = 0;
      for (int64_t x = 0; x < d; ++x) dot += qi[x] * kj[x];
      logits[j] = scale * dot;
      mx = std::max(mx, logits[j]);
    }
    double l = 0;
    for (int64_t j = lo; j < hi; ++j) l += std::exp(logits[j] - mx);
    // The query's weight in fp64 (the kernels' fp32 weight differs by a few ulp: within the band).
    const double weight = std::exp(static_cast<double>(m.log_decay) * static_cast<double>(w - 1 - i));
    for (int64_t j = 0; j < C; ++j)
      if (s.sinks + j < end) a[j] += weight * std::exp(logits[s.sinks + j] - mx) / l;
  }
  for (int64_t j = 0; j < C; ++j) a[j] /= static_cast<double>(snapkv_divisor(s, m, s.sinks + j));
}

}  // namespace

void SnapkvScored::add_window(int64_t default_window) {
  schema_.add({"obs_window", ParamType::Int, Value(default_window), {}, 1.0, 1e6, {},
               "observation window: the last queries, which vote and are always kept"});
}

void SnapkvScored::add_budget(const std::string& doc) {
  schema_.add({"budget", ParamType::Int, Value(int64_t{256}), {}, 1.0, 1e7, {}, doc});
  if (!schema_.find("obs_window")) return;
  schema_.rule("obs_window <= budget", [](const Params& p, const std::string&) -> std::string {
    if (p.i64("obs_window") <= p.i64("budget")) return {};
    return cat("budget=", p.i64("budget"), " is smaller than obs_window=", p.i64("obs_window"),
               "; the budget counts the window, which is always kept");
  });
}

void SnapkvScored::add_pooling(const std::string& default_pool, int64_t default_kernel) {
  schema_.add({"pool", ParamType::String, Value(default_pool), {}, {}, {}, {"max", "avg", "avg_padded"},
               "pooling of the scores along the keys: max, the mean of in-range keys, or the sum / kernel (kvpress)"});
  schema_.add({"pool_kernel", ParamType::Int, Value(default_kernel), {}, 1.0, 1023.0, {}, "pooling kernel (odd, same padding)"});
  schema_.rule("pool_kernel is odd", [](const Params& p, const std::string&) -> std::string {
    if (p.i64("pool_kernel") % 2 == 1) return {};
    return cat("pool_kernel=", p.i64("pool_kernel"), " is even; same padding needs an odd kernel");
  });
}

void SnapkvScored::add_ties() {
  schema_.add({"ties", ParamType::Bool, Value(false), {}, {}, {}, {},
               "G-KV plants exact ties: odd prefix positions duplicate the key before them"});
}

SnapkvParams SnapkvScored::window_scorer(const Case& c) const {
  return {static_cast<int32_t>(c.i64("obs_window")), static_cast<int32_t>((c.i64("pool_kernel") - 1) / 2),
          pool_mode(c.str("pool")), inv_sqrt_dim(c), 0};
}

SnapkvParams SnapkvScored::last_query_scorer(const Case& c) { return {1, 0, pool_avg, inv_sqrt_dim(c), 0}; }

SnapkvParams SnapkvScored::prompt_scorer(const Case& c, bool visible_mean) {
  return {static_cast<int32_t>(c.i64("kv_len")), 0, pool_avg, inv_sqrt_dim(c), visible_mean ? 1 : 0};
}

GkvConfig SnapkvScored::gkv(const Case& c) const {
  GkvConfig cfg = ScoredSelection::gkv(c);
  if (schema_.find("obs_window")) cfg.n_obs = c.i64("obs_window");
  if (schema_.find("ties")) cfg.ties = c.flag("ties");
  cfg.prompt_queries = scores_every_prompt_query();
  return cfg;
}

namespace {

// q_prompt and the window joined into q_obs: every prompt query (the last kv_len of them).
TensorMap every_prompt_query(const Case& c, TensorMap in) {
  const HostTensor &before = in.at("q_prompt"), &window = in.at("q_obs");
  const int64_t heads = c.i64("batch") * c.i64("q_heads"), d = c.i64("head_dim"), T = c.i64("kv_len");
  const int64_t n_before = before.shape()[2], n_window = window.shape()[2], skip = n_before + n_window - T;
  HostTensor all("q_obs", c.dtype, {c.i64("batch"), c.i64("q_heads"), T, d});
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t t = 0; t < T; ++t) {
      const int64_t from = skip + t;  // a row of [q_prompt; q_obs]
      for (int64_t x = 0; x < d; ++x)
        all.set((h * T + t) * d + x, from < n_before ? before.get((h * n_before + from) * d + x)
                                                     : window.get((h * n_window + from - n_before) * d + x));
    }
  in.erase("q_prompt");
  in.erase("q_obs");
  in.emplace("q_obs", std::move(all));
  return in;
}

}  // namespace

TensorMap SnapkvScored::prefill_inputs(const Case& c) const {
  TensorMap in = ScoredSelection::prefill_inputs(c);
  if (scores_every_prompt_query()) return every_prompt_query(c, std::move(in));
  const int64_t w = scorer(c).obs_window, n_obs = gkv(c).n_obs;
  if (w == n_obs) return in;
  // The scorer's window is the last w of the generator's: copy those rows, bits unchanged.
  const HostTensor& all = in.at("q_obs");
  const int64_t heads = c.i64("batch") * c.i64("q_heads"), d = c.i64("head_dim");
  HostTensor window("q_obs", c.dtype, {c.i64("batch"), c.i64("q_heads"), w, d});
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t x = 0; x < w * d; ++x) window.set(h * w * d + x, all.get((h * n_obs + n_obs - w) * d + x));
  in.erase("q_obs");
  in.emplace("q_obs", std::move(window));
  return in;
}

void SnapkvScored::score(const Case& c, const TensorMap& in, int64_t row, double* out) const {
  const SelectionParams s = selection(c);
  const SnapkvParams m = scorer(c);
  const int64_t C = s.candidates, n = heads_per_score_row(s), kernel = 2 * int64_t{m.pool_radius} + 1;
  std::vector<double> a(C), pooled(C);
  std::fill(out, out + C, 0.0);
  for (int64_t hh = 0; hh < n; ++hh) {
    const int64_t flat = row * n + hh;  // of [batch·q_heads]
    window_scores(s, m, in, flat / s.q_heads, flat % s.q_heads, a.data());
    pool(a.data(), C, kernel, static_cast<PoolMode>(m.pool_mode), pooled.data());
    for (int64_t j = 0; j < C; ++j) out[j] += pooled[j];
  }
  for (int64_t j = 0; j < C; ++j) out[j] /= static_cast<double>(n);
}

double SnapkvScored::tie_c(const Case& c, const TensorMap& in, int64_t row) const {
  const SelectionParams s = selection(c);
  const SnapkvParams m = scorer(c);
  const int64_t d = s.head_dim, w = m.obs_window, n = heads_per_score_row(s);
  const int64_t first_head = row * n, first_kv = first_head / s.group, kv_count = (n + s.group - 1) / s.group;
  const double lambda = static_cast<double>(m.scale) * max_row_norm(window_queries(in), first_head * w, n * w, d) *
                        max_row_norm(in.at("k"), first_kv * s.kv_len, kv_count * s.kv_len, d);
  return 1.02 * (2.0 * static_cast<double>(d + 3) * lambda +
                 static_cast<double>(s.kv_len + w + 2 * m.pool_radius + 1 + n + 8));
}

// q·k (2d), exp + sum + accumulate of P (3) per visible (window query, key) pair; pooling and the
// head mean per candidate. The window queries and every key are read once. Fewer than 8 query
// rows per key (a one-query scorer) do at most 4 flops per key byte read: below every backend's
// balance point, so those rows are judged by read bandwidth.
Work SnapkvScored::score_work(const Case& c) const {
  const SelectionParams s = selection(c);
  const SnapkvParams m = scorer(c);
  const double es = static_cast<double>(dtype_size(c.dtype)), d = static_cast<double>(s.head_dim);
  double pairs = 0;  // per query head
  for (int64_t i = 0; i < m.obs_window; ++i) pairs += static_cast<double>(snapkv_visible_end(s, m, i));
  const double heads = static_cast<double>(int64_t{s.batch} * s.q_heads), C = static_cast<double>(s.candidates);
  Work w;
  w.flops = heads * ((2 * d + 3) * pairs + C * (2.0 * m.pool_radius + 2));
  w.bytes = heads * m.obs_window * d * es + static_cast<double>(cache_rows(s)) * s.kv_len * d * es;
  w.bound = int64_t{s.group} * m.obs_window >= 8 ? Bound::compute : Bound::read;
  return w;
}

}  // namespace attnbench::kvcomp
