// quest — query-aware page selection for a decode step: every page of the cache keeps the
// elementwise min and max of its keys; a step bounds each page's attention logit from those and
// reads the pages with the largest bounds plus the current page. Selection-only: the cache stays
// whole. Catalog: B-QUEST. Paper: Tang et al. 2024, Quest: Query-Aware Sparsity for Efficient
// Long-Context LLM Inference. Semantics from the paper's criticality estimate (per-page min/max,
// the channel-wise upper bound, top-K pages loaded); the GQA rule is this harness's (below).
//
// Semantics (spec_version 1), per sequence b and KV head g, T = kv_len, P = page_size, the decode
// query q_h (position T − 1, sparse_step.h) of the group's heads h:
//   pages       page p holds tokens [pP, min((p + 1)P, T)); the last page, which holds the current
//               token, is always read (recent = T − P·⌊(T − 1)/P⌋ tokens)
//   summaries   kmin_{p,c}, kmax_{p,c}: the min and max of channel c over the page's keys (inputs,
//               maintained as the cache fills; exact in the storage dtype)
//   bound       U_p = (1/G)·Σ_h Σ_c max(q_{h,c}·kmax_{p,c}, q_{h,c}·kmin_{p,c}) ≥ the group's mean
//               logit (unscaled) with any key of the page
//   set         the current page, then the ⌊budget/P⌋ − 1 full pages of largest U (ties: the earlier
//               page), token by token, ascending; every token when budget ≥ T
//   step        O = attention of q over the set (gather_decode's stage), scale 1/√head_dim
// In the family's terms: each candidate token scored by its page's bound (so a page is kept or
// dropped whole: the tie rule keeps the earlier page's tokens first, and top_k is a multiple of
// P), recent = the current page forced, ScoreScope::per_kv_head, a uniform budget; selection_only().
//
// Differences from the authors' code, and why:
//   - one selection per KV head from the mean bound over its query heads: the authors' models are
//     MHA (a selection per head); under GQA the step reads one list per KV head, as the family's
//     other per-KV-head methods (snapkv's group mean).
//   - the budget counts tokens (the authors' token_budget), of which a partial current page takes
//     its own count; the authors count ⌊token_budget/P⌋ pages, the current one among them.
//   - summaries are inputs computed from the keys (the authors' kernel updates them as pages fill);
//     their cost is one min/max per key per step's append, not a decode step's.
//   - fp32 bounds, ties to the earlier page (torch.topk leaves them open).
//
// SET tie band: |fl32(U) − U| ≤ (d + 2)·u·M, M = (1/G)·Σ_h Σ_c |q_{h,c}|·max(|kmax_{p,c}|, |kmin_{p,c}|),
// so tie_c = 2.04·(d + 3)·max_p M_p / |U_k| with U_k the row's threshold bound (c_rel multiplies it).
//
// Inputs: the family's G-KV cache (its 32-query window, of which the last query is the step's
// q), k, v, q_future, and kmin, kmax [batch, kv_heads, pages, head_dim] (pages = ⌈T/P⌉, dtype).
// Outputs (sparse_step.h): kept_idx SET over the page bounds, kept_len, O TOL over the impl's set.
#include <algorithm>
#include <cmath>

#include "attnbench/error.h"
#include "quest_common.h"
#include "scored_selection.h"

namespace attnbench::kvcomp {
namespace {

class Quest final : public ScoredSelection {
 public:
  Quest()
      : ScoredSelection({.name = "quest",
                         .summary = "per-page key min/max bounds the query's logits; a decode step over the current page and the top pages",
                         .catalog_id = "B-QUEST",
                         .paper = "Tang et al. 2024, Quest: Query-Aware Sparsity for Efficient Long-Context LLM Inference",
                         .spec_version = 1}) {
    schema_.add({"budget", ParamType::Int, Value(int64_t{256}), {}, 1.0, 1e7, {},
                 "tokens one decode step reads per KV head: the current page and whole pages"});
    schema_.add({"page_size", ParamType::Int, Value(int64_t{16}), {}, 1.0, 4096.0, {}, "tokens per page (the authors' 16)"});
    add_n_future();
    schema_.rule("page_size <= budget", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("page_size") <= p.i64("budget")) return {};
      return cat("budget=", p.i64("budget"), " is smaller than page_size=", p.i64("page_size"),
                 "; a step reads at least the current page");
    });
  }

  bool selection_only() const override { return true; }

 protected:
  static int64_t current_page_tokens(const Case& c) {
    const int64_t T = c.i64("kv_len"), P = c.i64("page_size");
    return T - P * ((T - 1) / P);
  }
  Keep keep(const Case& c) const override { return {0, current_page_tokens(c)}; }
  // The current page and ⌊budget/P⌋ − 1 whole pages; every token when the budget covers them.
  int64_t budget(const Case& c) const override {
    const int64_t T = c.i64("kv_len"), P = c.i64("page_size");
    if (c.i64("budget") >= T) return T;
    return std::min(T, current_page_tokens(c) + P * std::max<int64_t>(0, c.i64("budget") / P - 1));
  }

  TensorMap prefill_inputs(const Case& c) const override {
    TensorMap in = ScoredSelection::prefill_inputs(c);
    const int64_t rows = c.i64("batch") * c.i64("kv_heads"), T = c.i64("kv_len"), d = c.i64("head_dim"), P = c.i64("page_size");
    const int64_t pages = (T + P - 1) / P;
    HostTensor kmin("kmin", c.dtype, {c.i64("batch"), c.i64("kv_heads"), pages, d});
    HostTensor kmax("kmax", c.dtype, {c.i64("batch"), c.i64("kv_heads"), pages, d});
    const HostTensor& k = in.at("k");
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t p = 0; p < pages; ++p)
        for (int64_t x = 0; x < d; ++x) {
          double lo = INFINITY, hi = -INFINITY;
          for (int64_t j = p * P; j < std::min(T, (p + 1) * P); ++j) {
            const double v = k.get((r * T + j) * d + x);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
          }
          kmin.set((r * pages + p) * d + x, lo);  // exact: a value of the dtype
          kmax.set((r * pages + p) * d + x, hi);
        }
    in.emplace("kmin", std::move(kmin));
    in.emplace("kmax", std::move(kmax));
    return in;
  }

  // U_p of every full page before the current one, with M_p (the bound's magnitude) beside it.
  struct Bounds {
    std::vector<double> u, magnitude;
  };
  static Bounds bounds(const Case& c, const TensorMap& in, int64_t row) {
    const int64_t Hq = c.i64("q_heads"), Hkv = c.i64("kv_heads"), G = Hq / Hkv, d = c.i64("head_dim");
    const int64_t T = c.i64("kv_len"), P = c.i64("page_size"), pages = (T + P - 1) / P, full = (T - current_page_tokens(c)) / P;
    const int64_t b = row / Hkv, g = row % Hkv;
    const std::vector<double> q = rows_f64(in.at("q"), b * Hq + g * G, G, d);
    const std::vector<double> lo = rows_f64(in.at("kmin"), row * pages, full, d), hi = rows_f64(in.at("kmax"), row * pages, full, d);
    Bounds out{std::vector<double>(full, 0.0), std::vector<double>(full, 0.0)};
    for (int64_t p = 0; p < full; ++p) {
      for (int64_t h = 0; h < G; ++h)
        for (int64_t x = 0; x < d; ++x) {
          const double qx = q[h * d + x], a = qx * hi[p * d + x], z = qx * lo[p * d + x];
          out.u[p] += std::max(a, z);
          out.magnitude[p] += std::abs(qx) * std::max(std::abs(hi[p * d + x]), std::abs(lo[p * d + x]));
        }
      out.u[p] /= static_cast<double>(G);
      out.magnitude[p] /= static_cast<double>(G);
    }
    return out;
  }

  void score(const Case& c, const TensorMap& in, int64_t row, double* out) const override {
    const int64_t P = c.i64("page_size");
    const Bounds bd = bounds(c, in, row);
    for (size_t p = 0; p < bd.u.size(); ++p) std::fill(out + p * P, out + (p + 1) * P, bd.u[p]);
  }

  double tie_c(const Case& c, const TensorMap& in, int64_t row) const override {
    const int64_t P = c.i64("page_size");
    const Bounds bd = bounds(c, in, row);
    const auto kept_pages = static_cast<size_t>((budget(c) - current_page_tokens(c)) / P);
    if (kept_pages == 0 || kept_pages >= bd.u.size()) return 0.0;  // no choice to make
    std::vector<double> sorted = bd.u;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<int64_t>(kept_pages) - 1, sorted.end(), std::greater<>());
    const double threshold = std::abs(sorted[kept_pages - 1]);
    const double m = *std::max_element(bd.magnitude.begin(), bd.magnitude.end());
    return 2.04 * static_cast<double>(c.i64("head_dim") + 3) * m / std::max(threshold, 1e-300);
  }

  // The bound reads the summaries of every full page (2·d elements) and the group's queries; a
  // multiply, a max and an add per element and head.
  Work score_work(const Case& c) const override {
    const double rows = static_cast<double>(c.i64("batch") * c.i64("kv_heads")), d = static_cast<double>(c.i64("head_dim"));
    const double G = static_cast<double>(c.i64("q_heads") / c.i64("kv_heads"));
    const double full = static_cast<double>((c.i64("kv_len") - current_page_tokens(c)) / c.i64("page_size"));
    const double es = static_cast<double>(dtype_size(c.dtype));
    return {rows * full * G * d * 4, rows * full * 2 * d * es + rows * G * d * es, Bound::read};
  }
};

}  // namespace

QuestParams quest_params(const Case& c) {
  const int64_t T = c.i64("kv_len"), P = c.i64("page_size");
  return {static_cast<int32_t>(P), static_cast<int32_t>((T + P - 1) / P),
          1.0f / static_cast<float>(c.i64("q_heads") / c.i64("kv_heads"))};
}

}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Quest);
