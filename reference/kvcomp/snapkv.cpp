// snapkv — observation-window voting with pooling: one-shot KV-cache compression after prefill.
// Catalog: B-SNAPKV (METHODS.md). Paper: Li et al. 2024, SnapKV: LLM Knows What You are Looking for
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
#include <limits>

#include "attnbench/check.h"
#include "attnbench/check_set.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/thread_pool.h"
#include "compacted_cache.h"
#include "gkv.h"
#include "snapkv_common.h"

namespace attnbench::kvcomp {

SnapkvShape snapkv_shape(const Case& c) {
  return {c.i64("batch"),      c.i64("q_heads"), c.i64("kv_heads"),   c.i64("head_dim"), c.i64("kv_len"),
          c.i64("obs_window"), c.i64("budget"),  c.i64("pool_kernel"), c.i64("n_future"),
          c.str("pool") == "avg" ? Pool::avg : Pool::max};
}

namespace {

constexpr int kSpecVersion = 1;

CompactedCache compacted(const SnapkvShape& s) {
  return {s.batch, s.q_heads, s.kv_heads, s.head_dim, s.kv_len, s.budget, s.kept(), s.n_future};
}

class Snapkv final : public Method {
 public:
  Snapkv() {
    info_ = {.name = "snapkv",
             .family = "kvcomp",
             .summary = "observation-window voting with pooling: keep the top prefix tokens plus the window",
             .catalog_id = "B-SNAPKV",
             .paper = "Li et al. 2024, SnapKV: LLM Knows What You are Looking for Before Generation",
             .spec_version = kSpecVersion,
             .phases = {},
             .dtypes = {DType::f32, DType::f16, DType::bf16}};
    add_cache_params(schema_);
    schema_.add({"obs_window", ParamType::Int, Value(int64_t{32}), {}, 1.0, 1e6, {},
                 "observation window: the last queries, which vote and are always kept"});
    schema_.add({"budget", ParamType::Int, Value(int64_t{256}), {}, 1.0, 1e7, {},
                 "kept tokens per KV head, the observation window included"});
    schema_.add({"pool", ParamType::String, Value(std::string("max")), {}, {}, {}, {"max", "avg"},
                 "pooling of the scores along the keys (avg ignores padding)"});
    schema_.add({"pool_kernel", ParamType::Int, Value(int64_t{7}), {}, 1.0, 1023.0, {}, "pooling kernel (odd, same padding)"});
    schema_.add({"n_future", ParamType::Int, Value(int64_t{16}), {}, 0.0, 4096.0, {},
                 "held-out later queries for quality (not the window that chose the keys)"});
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

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const SnapkvShape s = snapkv_shape(c);
    std::vector<OutputDecl> decls = compacted_cache_outputs(compacted(s), c.dtype, CheckClass::SET);
    OutputDecl scores{"scores", DType::f64, {s.batch, s.kv_heads, s.kv_len}, CheckClass::SET};
    scores.check_only = true;
    scores.doc = "scores [batch, kv_heads, kv_len]: fp64 score of each prefix token; +inf for always-kept tokens";
    OutputDecl tie_c{"tie_c", DType::f64, {s.batch, s.kv_heads}, CheckClass::SET};
    tie_c.check_only = true;
    tie_c.doc = "tie_c [batch, kv_heads]: c_rel of the SET tie band (methodology.md)";
    decls.push_back(scores);
    decls.push_back(tie_c);
    return decls;
  }

  TensorMap inputs(const Case& c) const override {
    const SnapkvShape s = snapkv_shape(c);
    GkvConfig cfg;
    cfg.batch = s.batch;
    cfg.q_heads = s.q_heads;
    cfg.kv_heads = s.kv_heads;
    cfg.head_dim = s.head_dim;
    cfg.kv_len = s.kv_len;
    cfg.n_obs = s.obs_window;
    cfg.n_future = s.n_future;
    cfg.ties = c.flag("ties");
    return generate_gkv(cfg, c.dtype, c.seed);
  }

  Reference reference(const Case& c, const TensorMap& in) const override;
  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override;
  Work work(const Case& c) const override;
  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override;

  // No baseline: the compression step has no uncompressed counterpart to be faster than. What the
  // method buys is the decode over the compressed cache, timed against the full cache by the two
  // companions; the leaderboard compares those.
  std::vector<RelatedCase> companions(const Case& c) const override {
    return decode_companions(compacted(snapkv_shape(c)), c.dtype);
  }

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

// a_{h,j} of step 1 for one (b, h): the window's mean softmax over the prefix keys, in fp64.
void window_scores(const SnapkvShape& s, const HostTensor& q, const HostTensor& k, int64_t b, int64_t h, double* a) {
  const int64_t d = s.head_dim, P = s.prefix(), g = h / s.group();
  const std::vector<double> keys = rows_f64(k, (b * s.kv_heads + g) * s.kv_len, s.kv_len, d);
  const std::vector<double> queries = rows_f64(q, (b * s.q_heads + h) * s.obs_window, s.obs_window, d);
  std::vector<double> logits(s.kv_len);
  std::fill(a, a + P, 0.0);
  for (int64_t i = 0; i < s.obs_window; ++i) {
    const double* qi = queries.data() + i * d;
    const int64_t end = s.visible_end(i);
    double m = -INFINITY;
    for (int64_t j = 0; j < end; ++j) {
      const double* kj = keys.data() + j * d;
      double dot = 0;
      for (int64_t x = 0; x < d; ++x) dot += qi[x] * kj[x];
      logits[j] = s.scale() * dot;
      m = std::max(m, logits[j]);
    }
    double l = 0;
    for (int64_t j = 0; j < end; ++j) l += std::exp(logits[j] - m);
    for (int64_t j = 0; j < P; ++j) a[j] += std::exp(logits[j] - m) / l;
  }
  for (int64_t j = 0; j < P; ++j) a[j] /= static_cast<double>(s.obs_window);
}

// Step 2 for one head: out[j] = max or mean of in[j−r .. j+r] ∩ [0, n).
void pool_row(const double* in, int64_t n, int64_t kernel, Pool pool, double* out) {
  const int64_t r = (kernel - 1) / 2;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t lo = std::max<int64_t>(0, j - r), hi = std::min(n - 1, j + r);
    double acc = pool == Pool::max ? -INFINITY : 0.0;
    for (int64_t t = lo; t <= hi; ++t) acc = pool == Pool::max ? std::max(acc, in[t]) : acc + in[t];
    out[j] = pool == Pool::max ? acc : acc / static_cast<double>(hi - lo + 1);
  }
}

// Largest Euclidean norm of rows [first, first + count) of a [.., d] tensor.
double max_row_norm(const HostTensor& t, int64_t first, int64_t count, int64_t d) {
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

Reference Snapkv::reference(const Case& c, const TensorMap& in) const {
  const SnapkvShape s = snapkv_shape(c);
  const HostTensor &q = in.at("q_obs"), &k = in.at("k"), &v = in.at("v");
  const int64_t rows = s.batch * s.kv_heads, d = s.head_dim, P = s.prefix(), G = s.group();
  HostTensor idx("kept_idx", DType::i32, {s.batch, s.kv_heads, s.budget});
  HostTensor len("kept_len", DType::i32, {s.batch, s.kv_heads});
  HostTensor scores("scores", DType::f64, {s.batch, s.kv_heads, s.kv_len});
  HostTensor tie_c("tie_c", DType::f64, {s.batch, s.kv_heads});
  HostTensor k_kept("k_kept", DType::f64, {s.batch, s.kv_heads, s.budget, d});
  HostTensor v_kept("v_kept", DType::f64, {s.batch, s.kv_heads, s.budget, d});
  idx.fill(-1);
  scores.fill(INFINITY);

  // Step 1 per (b, h); steps 2–4 per (b, g). Each slice sequential: no bit depends on threads.
  std::vector<double> a(s.batch * s.q_heads * P);
  harness_pool().parallel_for(s.batch * s.q_heads, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) window_scores(s, q, k, bh / s.q_heads, bh % s.q_heads, a.data() + bh * P);
  });
  harness_pool().parallel_for(rows, [&](int64_t begin, int64_t end) {
    std::vector<double> pooled(P), score(P);
    std::vector<int64_t> order(P), top(s.top_k());
    std::vector<double> row(d);
    for (int64_t bg = begin; bg < end; ++bg) {
      const int64_t b = bg / s.kv_heads;
      std::vector<int64_t> kept;
      if (s.keep_all()) {
        for (int64_t j = 0; j < s.kv_len; ++j) kept.push_back(j);
      } else {
        std::fill(score.begin(), score.end(), 0.0);
        for (int64_t hh = 0; hh < G; ++hh) {
          pool_row(a.data() + (bg * G + hh) * P, P, s.pool_kernel, s.pool, pooled.data());
          for (int64_t j = 0; j < P; ++j) score[j] += pooled[j];
        }
        for (int64_t j = 0; j < P; ++j) score[j] /= static_cast<double>(G);
        select_top_k(score.data(), P, s.top_k(), order.data(), top.data());
        kept.assign(top.begin(), top.end());
        for (int64_t j = P; j < s.kv_len; ++j) kept.push_back(j);
        std::copy(score.begin(), score.end(), scores.data<double>() + bg * s.kv_len);
        const double lambda = s.scale() * max_row_norm(q, b * s.q_heads * s.obs_window + (bg % s.kv_heads) * G * s.obs_window,
                                                       G * s.obs_window, d) *
                              max_row_norm(k, bg * s.kv_len, s.kv_len, d);
        tie_c.set(bg, 1.02 * (2.0 * static_cast<double>(d + 3) * lambda + static_cast<double>(s.kv_len + s.obs_window +
                                                                                            s.pool_kernel + G + 8)));
      }
      len.set(bg, static_cast<double>(kept.size()));
      for (size_t r = 0; r < kept.size(); ++r) {
        idx.set(bg * s.budget + static_cast<int64_t>(r), static_cast<double>(kept[r]));
        const int64_t src = (bg * s.kv_len + kept[r]) * d, dst = (bg * s.budget + static_cast<int64_t>(r)) * d;
        k.get_row(src, d, k_kept.data<double>() + dst);
        v.get_row(src, d, v_kept.data<double>() + dst);
      }
    }
  });
  Reference ref;
  ref.tensors.emplace("kept_idx", std::move(idx));
  ref.tensors.emplace("kept_len", std::move(len));
  ref.tensors.emplace("k_kept", std::move(k_kept));
  ref.tensors.emplace("v_kept", std::move(v_kept));
  ref.tensors.emplace("scores", std::move(scores));
  ref.tensors.emplace("tie_c", std::move(tie_c));
  return ref;
}

CheckReport Snapkv::check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const {
  const auto decls = outputs(c);
  const HostTensor& tie_c = ref.tensors.at("tie_c");
  TieBand band;
  for (int64_t r = 0; r < tie_c.numel(); ++r) band.c_rel.push_back(tie_c.get(r));
  OutputCheck idx = check_set(decls[0], ref.tensors.at("kept_idx"), ref.tensors.at("kept_len"), got.at("kept_idx"),
                              got.at("kept_len"), ref.tensors.at("scores"), band);
  return check_compacted_cache(decls, in, ref, got, std::move(idx));
}

Work Snapkv::work(const Case& c) const {
  const SnapkvShape s = snapkv_shape(c);
  const double es = static_cast<double>(dtype_size(c.dtype)), d = static_cast<double>(s.head_dim);
  double pairs = 0;  // visible (window query, key) pairs per query head
  if (!s.keep_all())
    for (int64_t i = 0; i < s.obs_window; ++i) pairs += static_cast<double>(s.visible_end(i));
  const double heads = static_cast<double>(s.batch * s.q_heads), rows = static_cast<double>(s.batch * s.kv_heads);
  const double P = static_cast<double>(s.prefix()), kept = static_cast<double>(s.kept());
  Work w;
  // q·k (2d), exp + sum + accumulate of P (3) per pair; pooling and the group mean per prefix key.
  w.flops = heads * ((2 * d + 3) * pairs + P * (static_cast<double>(s.pool_kernel) + 1));
  // Window queries and every key read once (scoring); the kept values read; indices, lengths and
  // the compacted K/V written at full capacity.
  const double cap = static_cast<double>(s.budget);
  w.bytes = (s.keep_all() ? 0.0 : heads * static_cast<double>(s.obs_window) * d * es) +
            rows * (static_cast<double>(s.keep_all() ? kept : s.kv_len) * d * es + kept * d * es) +
            rows * (cap * 4 + 4 + 2 * cap * d * es);
  w.bound = Bound::compute;
  return w;
}

Json Snapkv::quality(const Case& c, const TensorMap& in, const TensorMap& out) const {
  return compacted_cache_quality(compacted(snapkv_shape(c)), c.dtype, in, out);
}

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Snapkv);
