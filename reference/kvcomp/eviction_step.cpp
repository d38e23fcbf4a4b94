#include "eviction_step.h"

#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_set.h"
#include "attnbench/error.h"
#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "attnbench/thread_pool.h"
#include "compacted_cache.h"
#include "scored_selection_common.h"

namespace attnbench::kvcomp {

namespace {

constexpr int64_t kStateQueries = 8;  // window queries before the new token whose attention plants the state

// The new token's query row in G-KV's 32-query window (the last), and the state's first.
int64_t new_row(const StepSpec& sp) { return sp.gkv.n_obs - 1; }

// Query heads [first, first + n) of score row r, over the flattened [batch·q_heads].
int64_t first_head(const StepParams& s, int64_t r) { return r * step_heads_per_row(s); }
int64_t kv_row_of_head(const StepParams& s, int64_t bh) { return bh / s.q_heads * s.kv_heads + bh % s.q_heads / s.group; }

}  // namespace

void add_step_rules(ParamSchema& schema) {
  schema.rule("decode: kv_len >= 32, budget < kv_len", [](const Params& p, const std::string& phase) -> std::string {
    if (phase != "decode") return {};
    if (p.i64("kv_len") < 32) return cat("kv_len=", p.i64("kv_len"), ": a decode step needs at least 32 tokens of history");
    if (p.i64("budget") >= p.i64("kv_len"))
      return cat("budget=", p.i64("budget"), " >= kv_len=", p.i64("kv_len"),
                 ": the cache is not full, so the step evicts nothing (use a budget below kv_len)");
    return {};
  });
}

std::vector<OutputDecl> step_outputs(const StepSpec& sp, DType dtype) {
  const StepParams& s = sp.s;
  OutputDecl out{"out", dtype, {s.batch, s.q_heads, 1, s.head_dim}, CheckClass::TOL};
  out.doc = "out [batch, q_heads, 1, head_dim]: the new token's attention over the cache and itself";
  OutputDecl scores{"scores", DType::f32, {s.batch, s.kv_heads, s.slots}, CheckClass::TOL};
  scores.doc = "scores [batch, kv_heads, budget + 1]: each slot's score after the step";
  OutputDecl evicted{"evicted", DType::i32, {s.batch, s.kv_heads}, CheckClass::SET};
  evicted.doc = "evicted [batch, kv_heads]: the slot whose token leaves (the last slot's token takes it)";
  OutputDecl keys{"keys", DType::f64, {s.batch, s.kv_heads, s.slots}, CheckClass::SET};
  keys.check_only = true;
  keys.doc = "keys [batch, kv_heads, budget + 1]: fp64 eviction key of each slot; +inf where never evicted";
  OutputDecl tie{"tie_c", DType::f64, {s.batch, s.kv_heads}, CheckClass::SET};
  tie.check_only = true;
  tie.doc = "tie_c [batch, kv_heads]: c_rel of the SET tie band (methodology.md)";
  return {out, scores, evicted, keys, tie};
}

TensorMap step_inputs(const StepSpec& sp, DType dtype, uint64_t seed) {
  const StepParams& s = sp.s;
  GkvConfig cfg = sp.gkv;
  cfg.prompt_queries = false;
  cfg.n_future = 0;
  const TensorMap g = generate_gkv(cfg, dtype, seed);
  const HostTensor &q_obs = g.at("q_obs"), &k = g.at("k"), &v = g.at("v");
  const int64_t d = s.head_dim, T = s.kv_len, B = s.slots - 1, w = cfg.n_obs, R = s.recent;  // R: the previous step's forced tokens
  const int64_t heads = step_heads_per_row(s), prefix = T - 1 - R, heavy = B - R;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));

  TensorMap in;
  HostTensor q("q", dtype, {s.batch, s.q_heads, 1, d});
  for (int64_t bh = 0; bh < int64_t{s.batch} * s.q_heads; ++bh)
    for (int64_t x = 0; x < d; ++x) q.set(bh * d + x, q_obs.get((bh * w + new_row(sp)) * d + x));
  HostTensor ks("k", dtype, {s.batch, s.kv_heads, s.slots, d}), vs("v", dtype, {s.batch, s.kv_heads, s.slots, d});
  HostTensor pos("pos", DType::i32, {s.batch, s.kv_heads, s.slots});
  HostTensor acc("acc", DType::f32, {s.batch, s.kv_heads, std::max<int64_t>(1, B)});

  harness_pool().parallel_for(step_score_rows(s), [&](int64_t begin, int64_t end) {
    std::vector<double> state(T - 1), logits(T - 1), qrow(d);
    std::vector<int64_t> order(prefix), chosen(heavy);
    for (int64_t r = begin; r < end; ++r) {
      // The state score of every earlier position: Σ over the state queries of the row's mean softmax.
      std::fill(state.begin(), state.end(), 0.0);
      for (int64_t bh = first_head(s, r); bh < first_head(s, r) + heads; ++bh) {
        const std::vector<double> keys = rows_f64(k, kv_row_of_head(s, bh) * T, T - 1, d);
        for (int64_t i = std::max<int64_t>(0, new_row(sp) - kStateQueries); i < new_row(sp); ++i) {
          q_obs.get_row((bh * w + i) * d, d, qrow.data());
          const int64_t visible = std::min(T - 1, T - w + i + 1);  // query i sits at position T − w + i
          double mx = -INFINITY, l = 0;
          for (int64_t j = 0; j < visible; ++j) {
            double dot = 0;
            for (int64_t x = 0; x < d; ++x) dot += qrow[x] * keys[j * d + x];
            logits[j] = scale * dot;
            mx = std::max(mx, logits[j]);
          }
          for (int64_t j = 0; j < visible; ++j) l += std::exp(logits[j] - mx);
          for (int64_t j = 0; j < visible; ++j) state[j] += std::exp(logits[j] - mx) / l / static_cast<double>(heads);
        }
      }
      // The cache: the best `heavy` of the prefix by the tie rule, then the previous step's forced tokens.
      std::vector<int64_t> slots_pos;
      select_top_k(state.data(), prefix, heavy, order.data(), chosen.data());
      slots_pos.assign(chosen.begin(), chosen.end());
      for (int64_t j = prefix; j < T - 1; ++j) slots_pos.push_back(j);
      // Fisher–Yates by the seed: a cache's order after many evictions.
      const PhiloxStream shuffle(seed, "step.slots", kDomainInputs);
      for (int64_t i = B - 1; i > 0; --i) {
        const auto j = static_cast<int64_t>(shuffle.uniform_f64(static_cast<uint64_t>(r * B + i)) * static_cast<double>(i + 1));
        std::swap(slots_pos[i], slots_pos[std::min(j, i)]);
      }
      slots_pos.push_back(T - 1);  // the new token, appended
      const int64_t rows_here = s.shared_scores ? s.kv_heads : 1;
      for (int64_t cr = step_source_row(s, r); cr < step_source_row(s, r) + rows_here; ++cr)
        for (int64_t i = 0; i < s.slots; ++i) {
          pos.set(cr * s.slots + i, static_cast<double>(slots_pos[i]));
          if (i < B) acc.set(cr * B + i, state[slots_pos[i]]);
          for (int64_t x = 0; x < d; ++x) {
            ks.set((cr * s.slots + i) * d + x, k.get((cr * T + slots_pos[i]) * d + x));
            vs.set((cr * s.slots + i) * d + x, v.get((cr * T + slots_pos[i]) * d + x));
          }
        }
    }
  });
  in.emplace("q", std::move(q));
  in.emplace("k", std::move(ks));
  in.emplace("v", std::move(vs));
  in.emplace("pos", std::move(pos));
  if (s.accumulate) in.emplace("acc", std::move(acc));
  return in;
}

Reference step_reference(const StepSpec& sp, DType dtype, const TensorMap& in) {
  const StepParams& s = sp.s;
  const int64_t d = s.head_dim, n = s.slots, heads = step_heads_per_row(s), T = s.kv_len;
  const HostTensor &q = in.at("q"), &k = in.at("k"), &v = in.at("v"), &pos = in.at("pos");
  HostTensor out("out", DType::f64, {s.batch, s.q_heads, 1, d}), out_base("out", DType::f64, out.shape());
  HostTensor scores("scores", DType::f64, {s.batch, s.kv_heads, n}), scores_base("scores", DType::f64, scores.shape());
  HostTensor evicted("evicted", DType::i32, {s.batch, s.kv_heads});
  HostTensor keys("keys", DType::f64, {s.batch, s.kv_heads, n}), tie("tie_c", DType::f64, {s.batch, s.kv_heads});
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const auto scale32 = static_cast<float>(scale);

  harness_pool().parallel_for(step_score_rows(s), [&](int64_t begin, int64_t end) {
    std::vector<double> a(n), logit(n), qrow(d), o(d), key_row(n);
    std::vector<float> a32(n), logit32(n), q32(d), k32(d), o32(d);
    for (int64_t r = begin; r < end; ++r) {
      std::fill(a.begin(), a.end(), 0.0);
      std::fill(a32.begin(), a32.end(), 0.0f);
      double max_q = 0, max_k = 0;
      for (int64_t bh = first_head(s, r); bh < first_head(s, r) + heads; ++bh) {
        const int64_t kr = kv_row_of_head(s, bh);
        const std::vector<double> K = rows_f64(k, kr * n, n, d), V = rows_f64(v, kr * n, n, d);
        q.get_row(bh * d, d, qrow.data());
        q.get_row(bh * d, d, q32.data());
        double qn = 0;
        for (double x : qrow) qn += x * x;
        max_q = std::max(max_q, std::sqrt(qn));
        double mx = -INFINITY;
        float mx32 = -INFINITY;
        for (int64_t i = 0; i < n; ++i) {
          double dot = 0, kn = 0;
          float dot32 = 0;
          k.get_row((kr * n + i) * d, d, k32.data());
          for (int64_t x = 0; x < d; ++x) {
            dot += qrow[x] * K[i * d + x];
            kn += K[i * d + x] * K[i * d + x];
            dot32 += q32[x] * k32[x];
          }
          max_k = std::max(max_k, std::sqrt(kn));
          logit[i] = scale * dot;
          logit32[i] = dot32 * scale32;
          mx = std::max(mx, logit[i]);
          mx32 = std::max(mx32, logit32[i]);
        }
        double l = 0;
        float l32 = 0;
        for (int64_t i = 0; i < n; ++i) {
          l += std::exp(logit[i] - mx);
          l32 += std::exp(logit32[i] - mx32);
        }
        // The baseline's probabilities are recomputed from the fp32 log-sum-exp, as the step's
        // kernels do from the decode's (and FlashAttention's backward pass from its forward's).
        const float lse32 = mx32 + std::log(l32);
        // The output (fp64, and the straightforward fp32 step: P rounded to the storage dtype).
        std::fill(o.begin(), o.end(), 0.0);
        std::fill(o32.begin(), o32.end(), 0.0f);
        for (int64_t i = 0; i < n; ++i) {
          const double p = std::exp(logit[i] - mx) / l;
          const float e32 = std::exp(logit32[i] - mx32);
          const auto p_stored = static_cast<float>(round_to(dtype, e32));
          v.get_row((kr * n + i) * d, d, k32.data());
          for (int64_t x = 0; x < d; ++x) {
            o[x] += p * V[i * d + x];
            o32[x] += p_stored * k32[x];
          }
          a[i] += p / static_cast<double>(heads);
          a32[i] += std::exp(logit32[i] - lse32) / static_cast<float>(heads);
        }
        for (int64_t x = 0; x < d; ++x) {
          out.set(bh * d + x, o[x]);
          out_base.set(bh * d + x, round_to(dtype, o32[x] / l32));
        }
      }
      // Scores, keys and the eviction, from the row's source cache row (a shared row's KV heads
      // hold the same positions).
      const int64_t src = step_source_row(s, r);
      int64_t worst = -1;
      for (int64_t i = 0; i < n; ++i) {
        const bool stored = s.accumulate && i < n - 1;
        const double prior = stored ? in.at("acc").get(src * (n - 1) + i) : 0.0;
        const double score = prior + a[i];
        const auto p = static_cast<int32_t>(pos.get(src * n + i));
        const double key = s.visible_mean ? score / static_cast<double>(T - p) : score;
        key_row[i] = step_candidate(s, p) ? key : INFINITY;
        const float base = (stored ? static_cast<float>(prior) : 0.0f) + a32[i];
        for (int64_t cr = src; cr < src + (s.shared_scores ? s.kv_heads : 1); ++cr) {
          scores.set(cr * n + i, score);
          scores_base.set(cr * n + i, base);
        }
        if (step_candidate(s, p) &&
            (worst < 0 || step_evicts_first(key, p, key_row[worst], static_cast<int32_t>(pos.get(src * n + worst)))))
          worst = i;
      }
      ATTNBENCH_ASSERT(worst >= 0, "a full cache always has a token older than the recent window");
      // The key's relative error in fp32: the step's probability (snapkv_scorer.h's bound with one
      // query), the head mean, the add to acc and the visible-mean division.
      const double lambda = scale * max_q * max_k;
      const double c_rel = 1.02 * (2.0 * (static_cast<double>(d) + 3.0) * lambda + static_cast<double>(n + heads) + 12.0);
      for (int64_t cr = src; cr < src + (s.shared_scores ? s.kv_heads : 1); ++cr) {
        evicted.set(cr, static_cast<double>(worst));
        tie.set(cr, c_rel);
        for (int64_t i = 0; i < n; ++i) keys.set(cr * n + i, key_row[i]);
      }
    }
  });
  Reference ref;
  ref.baseline_err["out"] = max_abs_diff(out, out_base);
  ref.baseline_err["scores"] = max_abs_diff(scores, scores_base);
  ref.tensors.emplace("out", std::move(out));
  ref.tensors.emplace("scores", std::move(scores));
  ref.tensors.emplace("evicted", std::move(evicted));
  ref.tensors.emplace("keys", std::move(keys));
  ref.tensors.emplace("tie_c", std::move(tie));
  return ref;
}

namespace {

// The slots each row keeps, as the SET check's index sets: every slot but the evicted one,
// ascending ([rows, slots], length slots − 1). An evicted slot out of range keeps all of them.
void kept_slots(const HostTensor& evicted, int64_t slots, HostTensor& idx, HostTensor& len) {
  idx.fill(-1);
  for (int64_t r = 0; r < evicted.numel(); ++r) {
    const auto e = static_cast<int64_t>(evicted.get(r));
    int64_t m = 0;
    for (int64_t i = 0; i < slots; ++i)
      if (i != e) idx.set(r * slots + m++, static_cast<double>(i));
    len.set(r, static_cast<double>(std::min(m, slots - 1)));
  }
}

}  // namespace

CheckReport step_check(const StepSpec& sp, DType dtype, const TensorMap&, const Reference& ref, const TensorMap& got) {
  const StepParams& s = sp.s;
  const std::vector<OutputDecl> decls = step_outputs(sp, dtype);
  CheckReport report;
  report.outputs.push_back(check_tol(decls[0], ref.tensors.at("out"), got.at("out"), ref.baseline_err.at("out")));
  report.outputs.push_back(check_tol(decls[1], ref.tensors.at("scores"), got.at("scores"), ref.baseline_err.at("scores")));
  const HostTensor& ev = got.at("evicted");
  for (int64_t r = 0; r < ev.numel(); ++r) {
    const double e = ev.get(r);
    if (e < 0 || e >= s.slots) {
      report.outputs.push_back({"evicted", CheckClass::SET, false,
                                cat("evicted", index_str(ev.shape(), r), " = ", short_num(e), " is not a slot (0 .. ", s.slots - 1, ")")});
      return report;
    }
  }
  const int64_t rows = step_cache_rows(s);
  HostTensor want("evicted", DType::i32, {s.batch, s.kv_heads, s.slots}), want_len("kept", DType::i32, {s.batch, s.kv_heads});
  HostTensor have = want.clone(), have_len = want_len.clone();
  kept_slots(ref.tensors.at("evicted"), s.slots, want, want_len);
  kept_slots(ev, s.slots, have, have_len);
  TieBand band;
  for (int64_t r = 0; r < rows; ++r) band.c_rel.push_back(ref.tensors.at("tie_c").get(r));
  OutputDecl set_decl{"evicted", DType::i32, {s.batch, s.kv_heads, s.slots}, CheckClass::SET, "kept", 2, -1.0, Order::ascending};
  report.outputs.push_back(check_set(set_decl, want, want_len, have, have_len, ref.tensors.at("keys"), band));
  // One eviction per shared row: every KV head of a sequence evicts the same slot.
  if (s.shared_scores)
    for (int64_t r = 0; r < rows; ++r)
      if (ev.get(r) != ev.get(r - r % s.kv_heads)) {
        report.outputs.back().pass = false;
        report.outputs.back().message = cat("evicted", index_str(ev.shape(), r), " = ", ev.get(r), " differs from its sequence's head 0 (",
                                            ev.get(r - r % s.kv_heads), "): one ranking per sequence evicts one slot");
        break;
      }
  return report;
}

Work step_work(const StepSpec& sp, DType dtype) {
  const StepParams& s = sp.s;
  const double es = static_cast<double>(dtype_size(dtype)), d = s.head_dim, n = s.slots;
  const double rows = static_cast<double>(step_cache_rows(s)), qh = static_cast<double>(s.batch) * s.q_heads;
  Work w;
  w.flops = 4.0 * d * n * qh;  // the step's QKᵀ and PV (the scores reuse its logits in an ideal kernel)
  w.bytes = 2.0 * qh * d * es                     // q, out
            + rows * n * (2.0 * d * es + 4 + 4)   // K, V, positions, scores written
            + (s.accumulate ? rows * (n - 1) * 4 : 0) + rows * 4;
  w.bound = Bound::read;
  return w;
}

Json step_quality(const StepSpec& sp) {
  Json q;
  q["cache_tokens"] = sp.s.slots - 1;
  q["kv_len"] = sp.s.kv_len;
  return q;
}

std::vector<RelatedCase> step_companions(const StepSpec& sp, DType dtype) {
  const StepParams& s = sp.s;
  const CompactedCache cc{s.batch, s.q_heads, s.kv_heads, s.head_dim, s.kv_len, s.slots, s.slots, 0, false};
  return decode_companions(cc, dtype);
}

Case step_attention_case(const Case& c) {
  const StepParams s = step_params(c);
  return parse_case_id(cat("gqa/decode/batch=", s.batch, ",q_heads=", s.q_heads, ",kv_heads=", s.kv_heads, ",head_dim=",
                           s.head_dim, ",q_len=1,kv_len=", s.slots, "/", dtype_name(c.dtype), "/s", c.seed));
}

}  // namespace attnbench::kvcomp
