// zeromerge_decode — ZeroMerge's decode steps: a cache at its budget of slots keeps taking new
// tokens by merging its least-scored token into the nearest of its dense slots, and attends with
// the log-weight compensation λ·log w of the merged slots. `steps` generated tokens per case, one
// after another, each step's attention, scores, ring and merge. The prefill's layout is planted
// as the steps' start (the prefill init itself: zeromerge_common.h and the planting below).
// Catalog: B-ZEROMERGE's decode step. Paper: Liu et al. 2025, ZeroMerge: Parameter-Free KV Cache
// Compression for Memory-Efficient Long-Context LLMs. Cross-checked against the authors'
// mergekv/mergekv.py (cache_update, cache_merge, score_scaled_dot_product_attention).
//
// Semantics (spec_version 1), per row (sequence b, KV head g), s = 1/√head_dim, layout and ring:
// zeromerge_common.h. Step t, the cache holding n = fill(t) slots (key k_i, value v_i, weight
// w_i, score s_i), the new token (q_h for the group's query heads, k_new, v_new):
//   attend     logit_{h,i} = s·q_h·k_i + λ·ln w_i over the n slots and the new token (w = 1);
//              out_h = softmax(logit_h)·[v; v_new]
//   scores     a_i = Σ_{h in the group} softmax(logit_h)_i (the group's sum: the authors'
//              de_repeat_kv); s_i <- γ·s_i + a_i for the n slots
//   append     n < budget: slot n <- (k_new, v_new, w 1, s a_new); merged_from = merged_into = −1
//   merge      n = budget: ρ = the ring slot of the step; the departing token is slot ρ's;
//              i* = argmin s_i over the mergeable slots [M, D) (ties: the lower slot);
//              j* = the dense slot nearest k_{i*}: argmax k_{i*}·k_j, or with metric l2 argmin
//              ‖k_{i*} − k_j‖² (ties: the lower slot);
//              slot j* <- ((w_i k_i + w_j k_j)/(w_i + w_j), the same for v, w_i + w_j,
//              max(s_i, s_j) or with score_update sum s_i + s_j); slot i* <- the departing token;
//              slot ρ <- (k_new, v_new, w 1, s a_new); merged_from = i*, merged_into = j*
// Stored values are the cache's: keys and values rounded to the case dtype each time a slot is
// written (a merge computes in fp32 on the backends, in fp64 here), weights exact integers in f32,
// scores f32.
//
// The start (planted from G-KV, gkv.h, over kv_len + steps positions: the prompt is the first
// kv_len, the steps' queries, keys and values the rest; the window is the prompt's last 32
// queries). The prefill init of the authors' cache_init on the prompt, scored by the window:
//   score_j = Σ_i γ^(w−1−i) Σ_h softmax(s·q_{h,i}·k)_j over the window queries i that see j;
//   with kv_len ≤ budget every token, in order, w = 1; otherwise the last R tokens (the tail),
//   the top budget − R − M of the others by score (ties: the smaller index) in ascending order,
//   and the rest in order split into M contiguous groups (the first (rest mod M) one longer),
//   each averaged into a dense slot of weight its size and score the max (or sum) of its members'.
//   Layout [dense | top | tail]; slots past the fill NaN (a kernel that reads them fails).
//
// Differences from the authors' code, and why:
//   - budget, tail and dense are slot counts (the authors also take fractions of the prompt);
//     tail 0 means the authors' default, max(2, ⌊budget/10⌋).
//   - the top region is in ascending position (torch.topk leaves it in descending score); the
//     order only moves which of two equal scores argmin meets first, and the tie rule fixes that.
//   - weights are exact integers in f32, scores f32, merges in fp32 before the cache's rounding
//     (the authors': all in the model dtype, bf16 weights lose integers past 256).
//   - the window scores only the planted start; the prefill method scores every prompt query.
//   - rows are independent: the ring pointer advances once per step for every row (the authors
//     advance it on layer 0, once per model step: the same).
//
// Inputs: k_cache, v_cache [batch, kv_heads, budget, head_dim] (dtype), w_cache, s_cache [batch,
// kv_heads, budget] f32, q_new [batch, q_heads, steps, head_dim], k_new, v_new [batch, kv_heads,
// steps, head_dim]. Outputs: out [batch, q_heads, steps, head_dim] (every step's attention, TOL),
// the cache after the last step (k_final, v_final TOL; w_final EXACT; s_final TOL), merged_from
// and merged_into [batch, kv_heads, steps] i32. Rule: kv_len + steps ≥ budget (the cache ends full).
//
// Check: the reference replays the steps following the impl's own decisions. At each merge the
// replay's fp64 choice must be the impl's, or differ by less than the tie band (a score or metric
// within the bound of fp32 arithmetic on both sides and of one rounding of a merged slot to the
// dtype): then the replay takes the impl's choice (n_tie_swaps) and the steps go on from the same
// cache. Decisions are checked step by step that way (EXACT up to ties); the outputs and the final
// cache TOL against that fp64 replay, gated by the straightforward fp32 replay of the same
// decisions; weights EXACT.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/thread_pool.h"
#include "compacted_cache.h"
#include "gkv.h"
#include "zeromerge_common.h"

namespace attnbench::kvcomp {

constexpr int64_t kZmWindow = 32;

ZeromergeParams zeromerge_params(const Case& c) {
  ZeromergeParams s{};
  s.batch = static_cast<int32_t>(c.i64("batch"));
  s.q_heads = static_cast<int32_t>(c.i64("q_heads"));
  s.kv_heads = static_cast<int32_t>(c.i64("kv_heads"));
  s.group = s.q_heads / s.kv_heads;
  s.head_dim = static_cast<int32_t>(c.i64("head_dim"));
  s.budget = static_cast<int32_t>(c.i64("budget"));
  const int64_t tail = c.i64("tail");
  s.tail = static_cast<int32_t>(tail > 0 ? tail : std::max<int64_t>(2, s.budget / 10));
  s.dense = static_cast<int32_t>(c.i64("dense"));
  s.kv_len = static_cast<int32_t>(c.i64("kv_len"));
  s.filled = std::min(s.kv_len, s.budget);
  s.steps = static_cast<int32_t>(c.i64("steps"));
  s.metric_l2 = c.str("metric") == "l2" ? 1 : 0;
  s.score_sum = c.str("score_update") == "sum" ? 1 : 0;
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  s.lambda = static_cast<float>(c.f64("lambda"));
  s.decay = static_cast<float>(c.f64("decay"));
  return s;
}

namespace {

GkvConfig zm_gkv(const ZeromergeParams& s) {
  GkvConfig g;
  g.batch = s.batch;
  g.q_heads = s.q_heads;
  g.kv_heads = s.kv_heads;
  g.head_dim = s.head_dim;
  g.kv_len = int64_t{s.kv_len} + s.steps;
  g.n_obs = kZmWindow + s.steps;
  g.n_future = 1;
  return g;
}

// One row's cache during a replay, in T (double: the reference; float: the fp32 baseline); keys
// and values hold dtype-rounded values.
template <typename T>
struct RowCache {
  std::vector<T> k, v, s;
  std::vector<double> w;
};

struct Decisions {
  std::vector<int32_t> from, into;  // [rows, steps]
  int64_t tie_swaps = 0;
  std::string from_error, into_error;  // the first decision outside the tie band
};

// The replay of every row's steps. follow: the impl's decisions (nullptr: the replay's own); with
// T = float the decisions in `dec` are taken as they are.
template <typename T>
struct Replay {
  const ZeromergeParams& s;
  DType dtype;
  const TensorMap& in;

  // Writes out (f64 [batch, q_heads, steps, d]) and the final cache; fills or follows dec.
  void run(Decisions& dec, const HostTensor* follow_from, const HostTensor* follow_into, HostTensor& out, HostTensor& kc,
           HostTensor& vc, HostTensor& wc, HostTensor& sc, bool record) const {
    const int64_t rows = int64_t{s.batch} * s.kv_heads, S = s.steps;
    if (record) {
      dec.from.assign(rows * S, -1);
      dec.into.assign(rows * S, -1);
    }
    std::vector<int64_t> swaps(rows, 0);
    std::vector<std::string> from_err(rows), into_err(rows);
    harness_pool().parallel_for(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        run_row(r, dec, follow_from, follow_into, out, kc, vc, wc, sc, record, swaps[r], from_err[r], into_err[r]);
    });
    for (int64_t r = 0; r < rows; ++r) {
      dec.tie_swaps += swaps[r];
      if (dec.from_error.empty()) dec.from_error = from_err[r];
      if (dec.into_error.empty()) dec.into_error = into_err[r];
    }
  }

  static double eps(DType t) {
    return t == DType::bf16 ? std::ldexp(1.0, -8) : t == DType::f16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
  }

  void run_row(int64_t r, Decisions& dec, const HostTensor* follow_from, const HostTensor* follow_into, HostTensor& out,
               HostTensor& kc, HostTensor& vc, HostTensor& wc, HostTensor& sc, bool record, int64_t& swaps,
               std::string& from_err, std::string& into_err) const {
    const int64_t d = s.head_dim, B = s.budget, M = s.dense, D = zm_mergeable_end(s), G = s.group, S = s.steps;
    const int64_t b = r / s.kv_heads, g = r % s.kv_heads;
    const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(d)));
    const T lambda = static_cast<T>(s.lambda), decay = static_cast<T>(s.decay);
    RowCache<T> c;
    c.k.resize((B + 1) * d);
    c.v.resize((B + 1) * d);
    c.s.resize(B + 1);
    c.w.resize(B + 1);
    std::vector<double> row(d);
    for (int64_t i = 0; i < s.filled; ++i) {
      in.at("k_cache").get_row((r * B + i) * d, d, row.data());
      std::copy(row.begin(), row.end(), c.k.begin() + i * d);
      in.at("v_cache").get_row((r * B + i) * d, d, row.data());
      std::copy(row.begin(), row.end(), c.v.begin() + i * d);
      c.w[i] = in.at("w_cache").get(r * B + i);
      c.s[i] = static_cast<T>(in.at("s_cache").get(r * B + i));
    }
    std::vector<T> q(G * d), logit(B + 1), a(B + 1), o(d);
    for (int64_t t = 0; t < S; ++t) {
      const int64_t n = zm_fill(s, static_cast<int32_t>(t));
      // The new token sits in slot n for the attention (slot B when the cache is full).
      in.at("k_new").get_row((r * S + t) * d, d, row.data());
      std::copy(row.begin(), row.end(), c.k.begin() + n * d);
      in.at("v_new").get_row((r * S + t) * d, d, row.data());
      std::copy(row.begin(), row.end(), c.v.begin() + n * d);
      c.w[n] = 1;
      std::fill(a.begin(), a.begin() + n + 1, T(0));
      double max_q_elem = 0;
      for (int64_t h = 0; h < G; ++h) {
        const int64_t qh = b * s.q_heads + g * G + h;
        in.at("q_new").get_row((qh * S + t) * d, d, row.data());
        for (int64_t x = 0; x < d; ++x) {
          q[h * d + x] = static_cast<T>(row[x]);
          max_q_elem = std::max(max_q_elem, std::abs(row[x]));
        }
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t i = 0; i <= n; ++i) {
          T dot = 0;
          for (int64_t x = 0; x < d; ++x) dot += q[h * d + x] * c.k[i * d + x];
          logit[i] = scale * dot + (c.w[i] == 1 ? T(0) : lambda * static_cast<T>(std::log(static_cast<T>(c.w[i]))));
          mx = std::max(mx, logit[i]);
        }
        T l = 0;
        for (int64_t i = 0; i <= n; ++i) l += std::exp(logit[i] - mx);
        const T lse = mx + std::log(l);
        std::fill(o.begin(), o.end(), T(0));
        for (int64_t i = 0; i <= n; ++i) {
          const T e = std::exp(logit[i] - mx);
          for (int64_t x = 0; x < d; ++x) o[x] += e * c.v[i * d + x];
          a[i] += std::exp(logit[i] - lse);  // the kernels' probabilities: from the log-sum-exp
        }
        for (int64_t x = 0; x < d; ++x) {
          const double v = static_cast<double>(o[x] / l);
          out.set((qh * S + t) * d + x, std::is_same_v<T, float> ? round_to(dtype, v) : v);
        }
      }
      for (int64_t i = 0; i < n; ++i) c.s[i] = decay * c.s[i] + a[i];
      const int64_t at = r * S + t;
      if (n < B) {  // append: the new token stays in slot n
        c.s[n] = a[n];
        continue;
      }
      const int64_t rho = zm_ring_slot(s, static_cast<int32_t>(t));
      // i*: the least-scored mergeable slot.
      int64_t i_star = M;
      for (int64_t i = M + 1; i < D; ++i)
        if (c.s[i] < c.s[i_star]) i_star = i;
      if (follow_from) {
        const auto want = static_cast<int64_t>(follow_from->get(at));
        if (record && want != i_star) {
          bool ok = want >= M && want < D;
          if (ok) {
            // Tie band: both scores' fp32 error (a probability's, over the steps' decayed sum) and
            // one dtype rounding of a merged key in the logits (the lse every slot shares).
            double lam = 0;
            for (int64_t i = 0; i < n; ++i) {
              double kmax = 0;
              for (int64_t x = 0; x < d; ++x) kmax = std::max(kmax, std::abs(static_cast<double>(c.k[i * d + x])));
              lam = std::max(lam, kmax);
            }
            const double horizon = std::min<double>(static_cast<double>(t + 1), s.decay < 1 ? 1.0 / (1.0 - s.decay) : 1e9);
            const double rel = (2.0 * (static_cast<double>(d) + 3.0) * 8.0 + static_cast<double>(n) + 12.0) *
                                   std::ldexp(1.0, -24) * horizon +
                               4.0 * eps(dtype) * static_cast<double>(scale) * max_q_elem * lam * static_cast<double>(M);
            const double si = static_cast<double>(c.s[want]), sm = static_cast<double>(c.s[i_star]);
            ok = si - sm <= rel * (std::abs(si) + std::abs(sm)) + 1e-30;
          }
          if (ok) {
            ++swaps;
            i_star = want;
          } else if (from_err.empty()) {
            from_err = cat("merged_from", index_str({s.batch, s.kv_heads, s.steps}, at), " = ", want, ": the least-scored mergeable slot is ",
                           i_star, " (score ", short_num(static_cast<double>(c.s[i_star])), ", the impl's ",
                           want >= 0 && want < B ? short_num(static_cast<double>(c.s[want])) : std::string("out of range"), ")");
          }
        } else if (!record) {
          i_star = want;
        }
      }
      // j*: the dense slot nearest k_{i*}.
      const T* ki = c.k.data() + i_star * d;
      auto metric = [&](int64_t j) {
        T m = 0;
        for (int64_t x = 0; x < d; ++x) {
          const T kj = c.k[j * d + x];
          m += s.metric_l2 ? (ki[x] - kj) * (ki[x] - kj) : -ki[x] * kj;
        }
        return m;  // smaller is nearer
      };
      int64_t j_star = 0;
      T best = metric(0);
      for (int64_t j = 1; j < M; ++j) {
        const T m = metric(j);
        if (m < best) best = m, j_star = j;
      }
      if (follow_into) {
        const auto want = static_cast<int64_t>(follow_into->get(at));
        if (record && want != j_star) {
          bool ok = want >= 0 && want < M;
          if (ok) {
            double mag = 0, elem = 0;
            for (int64_t x = 0; x < d; ++x) {
              const double a_ = static_cast<double>(ki[x]), b1 = static_cast<double>(c.k[want * d + x]),
                           b2 = static_cast<double>(c.k[j_star * d + x]);
              const double t1 = s.metric_l2 ? (a_ - b1) * (a_ - b1) + (a_ - b2) * (a_ - b2) : std::abs(a_ * b1) + std::abs(a_ * b2);
              mag += t1;
              elem = std::max(elem, std::abs(a_) * std::max(std::abs(b1), std::abs(b2)) * (s.metric_l2 ? 4.0 : 1.0));
            }
            const double band = 4.0 * (static_cast<double>(d) + 2.0) * std::ldexp(1.0, -24) * mag + 8.0 * eps(dtype) * elem;
            ok = static_cast<double>(metric(want)) - static_cast<double>(best) <= band;
          }
          if (ok) {
            ++swaps;
            j_star = want;
          } else if (into_err.empty()) {
            into_err = cat("merged_into", index_str({s.batch, s.kv_heads, s.steps}, at), " = ", want, ": the dense slot nearest slot ", i_star,
                           "'s key is ", j_star);
          }
        } else if (!record) {
          j_star = want;
        }
      }
      if (record) {
        dec.from[at] = static_cast<int32_t>(i_star);
        dec.into[at] = static_cast<int32_t>(j_star);
      }
      // Merge i* into j*, rounded to the cache's dtype.
      const T wi = static_cast<T>(c.w[i_star]), wj = static_cast<T>(c.w[j_star]), wij = wi + wj;
      for (int64_t x = 0; x < d; ++x) {
        const T mk = (wi * c.k[i_star * d + x] + wj * c.k[j_star * d + x]) / wij;
        const T mv = (wi * c.v[i_star * d + x] + wj * c.v[j_star * d + x]) / wij;
        c.k[j_star * d + x] = static_cast<T>(round_to(dtype, static_cast<double>(mk)));
        c.v[j_star * d + x] = static_cast<T>(round_to(dtype, static_cast<double>(mv)));
      }
      c.w[j_star] = c.w[i_star] + c.w[j_star];
      c.s[j_star] = s.score_sum ? c.s[i_star] + c.s[j_star] : std::max(c.s[i_star], c.s[j_star]);
      // The departing ring token into i*, the new token into the ring slot.
      std::copy(c.k.begin() + rho * d, c.k.begin() + (rho + 1) * d, c.k.begin() + i_star * d);
      std::copy(c.v.begin() + rho * d, c.v.begin() + (rho + 1) * d, c.v.begin() + i_star * d);
      c.w[i_star] = c.w[rho];
      c.s[i_star] = c.s[rho];
      std::copy(c.k.begin() + B * d, c.k.begin() + (B + 1) * d, c.k.begin() + rho * d);
      std::copy(c.v.begin() + B * d, c.v.begin() + (B + 1) * d, c.v.begin() + rho * d);
      c.w[rho] = 1;
      c.s[rho] = a[B];
    }
    for (int64_t i = 0; i < B; ++i) {
      for (int64_t x = 0; x < d; ++x) {
        kc.set((r * B + i) * d + x, static_cast<double>(c.k[i * d + x]));
        vc.set((r * B + i) * d + x, static_cast<double>(c.v[i * d + x]));
      }
      wc.set(r * B + i, c.w[i]);
      sc.set(r * B + i, std::is_same_v<T, float> ? static_cast<double>(static_cast<float>(c.s[i])) : static_cast<double>(c.s[i]));
    }
  }
};

struct ReplayOut {
  HostTensor out, k, v, w, s;
  Decisions dec;
};

ReplayOut new_replay_out(const ZeromergeParams& s) {
  const int64_t B = s.batch, Hq = s.q_heads, H = s.kv_heads, d = s.head_dim, N = s.budget, S = s.steps;
  return {HostTensor("out", DType::f64, {B, Hq, S, d}), HostTensor("k_final", DType::f64, {B, H, N, d}),
          HostTensor("v_final", DType::f64, {B, H, N, d}), HostTensor("w_final", DType::f32, {B, H, N}),
          HostTensor("s_final", DType::f64, {B, H, N}), {}};
}

HostTensor decisions_tensor(const char* name, const ZeromergeParams& s, const std::vector<int32_t>& v) {
  HostTensor t(name, DType::i32, {s.batch, s.kv_heads, s.steps});
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[i]);
  return t;
}

class ZeromergeDecode final : public Method {
 public:
  ZeromergeDecode() {
    info_ = {.name = "zeromerge_decode",
             .family = "kvcomp",
             .summary = "ZeroMerge's decode steps: a full cache merges its least-scored token into the nearest dense slot, attention with λ·log w",
             .catalog_id = "B-ZEROMERGE",
             .paper = "Liu et al. 2025, ZeroMerge: Parameter-Free KV Cache Compression for Memory-Efficient Long-Context LLMs",
             .spec_version = 1};
    info_.phases = {"decode"};
    info_.dtypes = {DType::f32, DType::f16, DType::bf16};
    add_cache_params(schema_);
    schema_.add({"budget", ParamType::Int, std::nullopt, {}, 4.0, 1e6, {}, "slots of each (sequence, KV head)'s cache"});
    schema_.add({"tail", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1e6, {},
                 "R: the recent slots, the ring over the last R − 1 of them (0: max(2, budget/10), the authors' default)"});
    schema_.add({"dense", ParamType::Int, Value(int64_t{1}), {}, 1.0, 1e6, {}, "M: merged slots at the cache's front"});
    schema_.add({"steps", ParamType::Int, Value(int64_t{256}), {}, 1.0, 65536.0, {}, "decode steps, one generated token each"});
    schema_.add({"lambda", ParamType::Float, Value(1.0), {}, 0.0, 16.0, {}, "compensation: logits of a slot of weight w gain λ·log w"});
    schema_.add({"decay", ParamType::Float, Value(0.98), {}, 0.0, 1.0, {}, "γ: scores decay by γ at each step before its attention is added"});
    schema_.add({"metric", ParamType::String, Value(std::string("dot_product")), {}, {}, {}, {"dot_product", "l2"},
                 "the dense slot a token merges into: largest dot product with its key, or smallest L2 distance"});
    schema_.add({"score_update", ParamType::String, Value(std::string("max")), {}, {}, {}, {"max", "sum"},
                 "a merged slot's score: the larger of the two, or their sum"});
    schema_.rule("zeromerge: budget > tail + dense, tail >= 2, the cache full by the last step", [](const Params& p, const std::string&) -> std::string {
      const int64_t B = p.i64("budget"), R = p.i64("tail") > 0 ? p.i64("tail") : std::max<int64_t>(2, p.i64("budget") / 10);
      const int64_t M = p.i64("dense"), T = p.i64("kv_len"), S = p.i64("steps");
      if (R < 2) return cat("tail=", R, ": the ring needs at least 2 recent slots (it cycles over tail − 1)");
      if (B <= R + M) return cat("budget=", B, " leaves no mergeable slot beside tail=", R, " and dense=", M, " (needs budget > tail + dense)");
      if (T < kZmWindow) return cat("kv_len=", T, " is shorter than the 32-query window that scores the start");
      if (T + S < B) return cat("kv_len + steps = ", T + S, " never fills budget=", B, ": the steps would only append");
      return {};
    });
  }
  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const ZeromergeParams s = zeromerge_params(c);
    const int64_t B = s.batch, Hq = s.q_heads, H = s.kv_heads, d = s.head_dim, N = s.budget, S = s.steps;
    auto decl = [](const char* name, DType t, Shape shape, CheckClass cls, const char* doc) {
      OutputDecl o{name, t, std::move(shape), cls};
      o.doc = doc;
      return o;
    };
    return {decl("out", c.dtype, {B, Hq, S, d}, CheckClass::TOL, "out [batch, q_heads, steps, head_dim]: each step's attention"),
            decl("k_final", c.dtype, {B, H, N, d}, CheckClass::TOL, "k_final [batch, kv_heads, budget, head_dim]: the cache's keys after the last step"),
            decl("v_final", c.dtype, {B, H, N, d}, CheckClass::TOL, "v_final [batch, kv_heads, budget, head_dim]: the cache's values after the last step"),
            decl("w_final", DType::f32, {B, H, N}, CheckClass::EXACT, "w_final [batch, kv_heads, budget]: tokens merged into each slot after the last step"),
            decl("s_final", DType::f32, {B, H, N}, CheckClass::TOL, "s_final [batch, kv_heads, budget]: each slot's score after the last step"),
            decl("merged_from", DType::i32, {B, H, S}, CheckClass::EXACT, "merged_from [batch, kv_heads, steps]: the slot merged away (−1: appended)"),
            decl("merged_into", DType::i32, {B, H, S}, CheckClass::EXACT, "merged_into [batch, kv_heads, steps]: the dense slot it joined (−1: appended)")};
  }

  TensorMap inputs(const Case& c) const override {
    const ZeromergeParams s = zeromerge_params(c);
    TensorMap g = generate_gkv(zm_gkv(s), c.dtype, c.seed);
    const HostTensor &qo = g.at("q_obs"), &k = g.at("k"), &v = g.at("v");
    const int64_t Bt = s.batch, Hq = s.q_heads, H = s.kv_heads, d = s.head_dim, N = s.budget, S = s.steps, T = s.kv_len;
    const int64_t L = T + S, n_obs = kZmWindow + S, G = s.group, M = s.dense, R = s.tail;
    HostTensor kc("k_cache", c.dtype, {Bt, H, N, d}), vc("v_cache", c.dtype, {Bt, H, N, d});
    HostTensor wc("w_cache", DType::f32, {Bt, H, N}), sc("s_cache", DType::f32, {Bt, H, N});
    HostTensor qn("q_new", c.dtype, {Bt, Hq, S, d}), kn("k_new", c.dtype, {Bt, H, S, d}), vn("v_new", c.dtype, {Bt, H, S, d});
    const double nan = std::nan("");
    kc.fill(nan);
    vc.fill(nan);
    wc.fill(nan);
    sc.fill(nan);
    for (int64_t bh = 0; bh < Bt * Hq; ++bh)
      for (int64_t t = 0; t < S; ++t)
        for (int64_t x = 0; x < d; ++x) qn.set((bh * S + t) * d + x, qo.get((bh * n_obs + kZmWindow + t) * d + x));
    for (int64_t r = 0; r < Bt * H; ++r)
      for (int64_t t = 0; t < S; ++t)
        for (int64_t x = 0; x < d; ++x) {
          kn.set((r * S + t) * d + x, k.get((r * L + T + t) * d + x));
          vn.set((r * S + t) * d + x, v.get((r * L + T + t) * d + x));
        }
    const double scale = 1.0 / std::sqrt(static_cast<double>(d)), gamma = c.f64("decay");
    const bool sum = s.score_sum != 0;
    harness_pool().parallel_for(Bt * H, [&](int64_t begin, int64_t end) {
      std::vector<double> score(T), logit(T), qrow(d);
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / H, g = r % H;
        const std::vector<double> K = rows_f64(k, r * L, T, d), V = rows_f64(v, r * L, T, d);
        std::fill(score.begin(), score.end(), 0.0);
        for (int64_t h = 0; h < G; ++h)
          for (int64_t i = 0; i < kZmWindow; ++i) {
            qo.get_row(((b * Hq + g * G + h) * n_obs + i) * d, d, qrow.data());
            const int64_t seen = T - kZmWindow + i + 1;
            double mx = -INFINITY;
            for (int64_t j = 0; j < seen; ++j) {
              double dot = 0;
              for (int64_t x = 0; x < d; ++x) dot += qrow[x] * K[j * d + x];
              logit[j] = scale * dot;
              mx = std::max(mx, logit[j]);
            }
            double l = 0;
            for (int64_t j = 0; j < seen; ++j) l += std::exp(logit[j] - mx);
            const double wgt = std::pow(gamma, static_cast<double>(kZmWindow - 1 - i));
            for (int64_t j = 0; j < seen; ++j) score[j] += wgt * std::exp(logit[j] - mx) / l;
          }
        // The layout: every token, or [dense | top | tail].
        std::vector<int64_t> top;
        std::vector<std::vector<int64_t>> groups;
        if (T <= N) {
          for (int64_t j = 0; j < T; ++j) top.push_back(j);
        } else {
          const int64_t cand = T - R, k_top = N - R - M;
          std::vector<int64_t> order(cand);
          for (int64_t j = 0; j < cand; ++j) order[j] = j;
          std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b2) { return score[a] > score[b2]; });
          std::vector<char> kept(cand, 0);
          for (int64_t i = 0; i < k_top; ++i) kept[order[i]] = 1;
          std::vector<int64_t> rest;
          for (int64_t j = 0; j < cand; ++j) (kept[j] ? top : rest).push_back(j);
          const int64_t q = static_cast<int64_t>(rest.size()) / M, rem = static_cast<int64_t>(rest.size()) % M;
          int64_t at = 0;
          for (int64_t m = 0; m < M; ++m) {
            const int64_t len = q + (m < rem ? 1 : 0);
            groups.emplace_back(rest.begin() + at, rest.begin() + at + len);
            at += len;
          }
          for (int64_t j = T - R; j < T; ++j) top.push_back(j);
        }
        int64_t slot = 0;
        for (const auto& grp : groups) {
          double sg = sum ? 0.0 : -INFINITY;
          for (int64_t x = 0; x < d; ++x) {
            double mk = 0, mv = 0;
            for (int64_t j : grp) {
              mk += K[j * d + x];
              mv += V[j * d + x];
            }
            kc.set((r * N + slot) * d + x, mk / static_cast<double>(grp.size()));
            vc.set((r * N + slot) * d + x, mv / static_cast<double>(grp.size()));
          }
          for (int64_t j : grp) sg = sum ? sg + score[j] : std::max(sg, score[j]);
          wc.set(r * N + slot, static_cast<double>(grp.size()));
          sc.set(r * N + slot, sg);
          ++slot;
        }
        for (int64_t j : top) {
          for (int64_t x = 0; x < d; ++x) {
            kc.set((r * N + slot) * d + x, K[j * d + x]);
            vc.set((r * N + slot) * d + x, V[j * d + x]);
          }
          wc.set(r * N + slot, 1.0);
          sc.set(r * N + slot, score[j]);
          ++slot;
        }
      }
    });
    TensorMap in;
    for (HostTensor* t : {&kc, &vc, &wc, &sc, &qn, &kn, &vn}) in.emplace(t->name(), std::move(*t));
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const ZeromergeParams s = zeromerge_params(c);
    ReplayOut r = new_replay_out(s);
    Replay<double>{s, c.dtype, in}.run(r.dec, nullptr, nullptr, r.out, r.k, r.v, r.w, r.s, true);
    Reference ref;
    ref.tensors.emplace("out", std::move(r.out));
    ref.tensors.emplace("k_final", std::move(r.k));
    ref.tensors.emplace("v_final", std::move(r.v));
    ref.tensors.emplace("w_final", std::move(r.w));
    ref.tensors.emplace("s_final", std::move(r.s));
    ref.tensors.emplace("merged_from", decisions_tensor("merged_from", s, r.dec.from));
    ref.tensors.emplace("merged_into", decisions_tensor("merged_into", s, r.dec.into));
    return ref;
  }

  // The replay that follows the impl's decisions (the header's Check), then TOL and EXACT against it.
  CheckReport check(const Case& c, const TensorMap& in, const Reference&, const TensorMap& got) const override {
    const ZeromergeParams s = zeromerge_params(c);
    const std::vector<OutputDecl> decls = outputs(c);
    CheckReport report;
    const HostTensor &from = got.at("merged_from"), &into = got.at("merged_into");
    // Appending steps are known from the shapes; a merge's indices must be slots of their region.
    for (int64_t i = 0; i < from.numel(); ++i) {
      const auto t = static_cast<int32_t>(i % s.steps);
      const bool append = zm_fill(s, t) < s.budget;
      const double f = from.get(i), j = into.get(i);
      const bool ok = append ? (f == -1 && j == -1) : (f >= s.dense && f < zm_mergeable_end(s) && j >= 0 && j < s.dense);
      if (!ok) {
        report.outputs.push_back({"merged_from", CheckClass::EXACT, false,
                                  cat("step ", t, index_str(from.shape(), i), ": merged_from ", short_num(f), ", merged_into ", short_num(j),
                                      append ? " (an appending step: both −1)"
                                             : cat(" (a merge: from in [", s.dense, ", ", zm_mergeable_end(s), "), into in [0, ", s.dense, "))"))});
        return report;
      }
    }
    ReplayOut ref = new_replay_out(s);
    Replay<double>{s, c.dtype, in}.run(ref.dec, &from, &into, ref.out, ref.k, ref.v, ref.w, ref.s, true);
    ReplayOut base = new_replay_out(s);
    Decisions followed = ref.dec;
    const HostTensor f_t = decisions_tensor("merged_from", s, followed.from), i_t = decisions_tensor("merged_into", s, followed.into);
    Replay<float>{s, c.dtype, in}.run(followed, &f_t, &i_t, base.out, base.k, base.v, base.w, base.s, false);
    OutputCheck from_check{"merged_from", CheckClass::EXACT, ref.dec.from_error.empty(), ref.dec.from_error};
    from_check.metrics["n_tie_swaps"] = ref.dec.tie_swaps;
    OutputCheck into_check{"merged_into", CheckClass::EXACT, ref.dec.into_error.empty(), ref.dec.into_error};
    report.outputs.push_back(check_tol(decls[0], ref.out, got.at("out"), max_abs_diff(ref.out, base.out)));
    report.outputs.push_back(check_tol(decls[1], ref.k, got.at("k_final"), max_abs_diff(ref.k, base.k)));
    report.outputs.push_back(check_tol(decls[2], ref.v, got.at("v_final"), max_abs_diff(ref.v, base.v)));
    report.outputs.push_back(check_exact(decls[3], ref.w, got.at("w_final"), nullptr));
    report.outputs.push_back(check_tol(decls[4], ref.s, got.at("s_final"), max_abs_diff(ref.s, base.s)));
    report.outputs.push_back(std::move(from_check));
    report.outputs.push_back(std::move(into_check));
    return report;
  }

  // The inputs read once and the outputs written once (method.h's ideal): a row's cache is a few
  // MiB at most, which the steps re-read from the caches close to the cores, not from memory; the
  // flops are every step's QKᵀ and PV and the scores' second QKᵀ. The row is latency-bound (one
  // step after another), so its fraction of the read ceiling says how far it is from streaming.
  Work work(const Case& c) const override {
    const ZeromergeParams s = zeromerge_params(c);
    const double es = static_cast<double>(dtype_size(c.dtype)), d = s.head_dim, rows = double(s.batch) * s.kv_heads;
    const double qh = double(s.batch) * s.q_heads, S = s.steps, N = s.budget;
    Work w;
    for (int32_t t = 0; t < s.steps; ++t) w.flops += 6.0 * d * (zm_fill(s, t) + 1.0) * qh;
    w.bytes = 2 * rows * N * (2 * d * es + 8)     // the cache in and out: keys, values, weights, scores
              + qh * S * d * es * 2               // q_new, out
              + rows * S * (2 * d * es + 8);      // k_new, v_new, the decisions
    w.bound = Bound::read;
    return w;
  }

  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override {
    const ZeromergeParams s = zeromerge_params(c);
    const double es = static_cast<double>(dtype_size(c.dtype)), rows = double(s.batch) * s.kv_heads;
    const int64_t full = int64_t{s.kv_len} + s.steps;
    Json q;
    q["kv_len"] = full;
    q["cache_slots"] = s.budget;
    q["kv_bytes_full"] = 2.0 * rows * double(full) * s.head_dim * es;
    q["kv_bytes_kept"] = rows * s.budget * (2.0 * s.head_dim * es + 8.0);  // keys, values, weight and score
    q["compression_ratio"] = double(full) / s.budget;
    q["steps"] = s.steps;
    int64_t merges = 0;
    for (int32_t t = 0; t < s.steps; ++t) merges += zm_fill(s, t) == s.budget;
    q["merges_per_row"] = merges;
    // Fidelity: every 16th step's output against exact attention over every token so far (the
    // prompt and the steps' tokens up to this one), over all query heads together.
    const GkvConfig cfg = zm_gkv(s);
    const TensorMap g = generate_gkv(cfg, c.dtype, c.seed);
    const HostTensor &k = g.at("k"), &v = g.at("v"), &qn = in.at("q_new"), &o = out.at("out");
    const int64_t d = s.head_dim, L = cfg.kv_len, S = s.steps, heads = int64_t{s.batch} * s.q_heads;
    std::vector<double> err(heads, 0.0), norm(heads, 0.0), dot(heads, 0.0), onorm(heads, 0.0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    harness_pool().parallel_for(heads, [&](int64_t begin, int64_t end) {
      std::vector<double> qr(d), orow(d), full(d), logit(L), kr(d);
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t kv = (bh / s.q_heads) * s.kv_heads + (bh % s.q_heads) / s.group;
        for (int64_t t = 0; t < S; t += 16) {
          const int64_t n = s.kv_len + t + 1;
          qn.get_row((bh * S + t) * d, d, qr.data());
          o.get_row((bh * S + t) * d, d, orow.data());
          double mx = -INFINITY;
          for (int64_t j = 0; j < n; ++j) {
            k.get_row((kv * L + j) * d, d, kr.data());
            double acc = 0;
            for (int64_t x = 0; x < d; ++x) acc += qr[x] * kr[x];
            logit[j] = scale * acc;
            mx = std::max(mx, logit[j]);
          }
          double l = 0;
          std::fill(full.begin(), full.end(), 0.0);
          for (int64_t j = 0; j < n; ++j) {
            const double e = std::exp(logit[j] - mx);
            l += e;
            v.get_row((kv * L + j) * d, d, kr.data());
            for (int64_t x = 0; x < d; ++x) full[x] += e * kr[x];
          }
          for (int64_t x = 0; x < d; ++x) {
            full[x] /= l;
            err[bh] += (orow[x] - full[x]) * (orow[x] - full[x]);
            norm[bh] += full[x] * full[x];
            dot[bh] += orow[x] * full[x];
            onorm[bh] += orow[x] * orow[x];
          }
        }
      }
    });
    double e = 0, nf = 0, dt = 0, no = 0;
    for (int64_t h = 0; h < heads; ++h) e += err[h], nf += norm[h], dt += dot[h], no += onorm[h];
    q["out_rel_l2"] = nf > 0 ? std::sqrt(e / nf) : 0.0;
    q["out_cos"] = nf > 0 && no > 0 ? dt / std::sqrt(nf * no) : 0.0;
    return q;
  }

  std::vector<RelatedCase> companions(const Case& c) const override {
    const ZeromergeParams s = zeromerge_params(c);
    const CompactedCache cc{s.batch, s.q_heads, s.kv_heads, s.head_dim, int64_t{s.kv_len} + s.steps, s.budget + 1, s.budget + 1, 0, false};
    return decode_companions(cc, c.dtype);
  }

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::ZeromergeDecode);
