// lessismore — unified cross-head token selection with a stable recency window: every query head
// ranks the keys by its raw logit, the heads' rankings are merged rank by rank into one set for
// the whole layer, and the step reads that set plus the most recent tokens. Selection-only: the
// cache stays whole. Catalog: B-LESSISMORE. Paper: Hu et al. 2025, Less Is More: Training-Free
// Sparse Attention with Global Locality for Efficient Reasoning (arXiv 2508.07101, Algorithm 1 and
// §3.2–3.3; the backbone is TidalDecode's selection layers).
//
// Semantics (spec_version 1), per sequence b, T = kv_len, K_b = budget, r = recent_ratio, the decode
// query q_h (position T − 1, sparse_step.h) of each of its query heads h (H of them):
//   R = ⌊K_b·r⌋ recent tokens, k = K_b − R selected ones; candidates j < T − R
//   per head   P_{h,j} = q_h·k_{g(h),j} (raw: the scale does not change a ranking); the top k by
//              the tie rule (larger logit, then smaller index), ranked 0 .. k − 1
//   union      all heads' rank-0 picks in head order, then their rank-1 picks, …; the first k
//              distinct tokens. Equivalently token j's key is min over heads of rank_h(j)·H + h, and
//              the k smallest keys are kept
//   set        those k ∪ [T − R, T), ascending, the same for every KV head; everything when K_b ≥ T
//   step       O = attention of q over the set (gather_decode's stage), scale 1/√head_dim
// In the family's terms: one score row per sequence whose score is −key (tokens in no head's top
// k score below every key), recent = R forced, a uniform budget, selection_only(); kept_idx has its
// own check (below).
//
// Differences from the paper, and why:
//   - one case is one layer: its query selects and the same layer's step reads the set. In the
//     paper a token-selection layer attends in full and chooses, and the later sparse layers read
//     the set with their own queries and keys; the held-out figures (the next queries over the
//     same set) stand for that reuse.
//   - query heads map to KV heads by g(h) = h / (q_heads / kv_heads) (GQA), each head ranking its
//     own KV head's keys.
//   - fp32 logits in the impls; the paper's rank-major merge and its tie order by head are kept.
//
// Check of kept_idx (the set is a function of rankings, not of one score per token, so the
// family's SET band does not apply): per head, an fp32 logit is within
// β_h = 2.04·(d + 3)·2⁻²⁴·‖q_h‖·max_j ‖k_j‖ of its fp64 value (two logits compared: times two), so
// token j's rank in head h lies in [#{i : P_i > P_j + β_h}, #{i : P_i ≥ P_j − β_h} − 1] and its key
// in [key_lo(j), key_hi(j)], the min over heads of each end. A kept set S of k candidates passes
// when max_{i ∈ S} key_lo(i) ≤ min_{j ∉ S} key_hi(j): some resolution of the near-ties ranks it
// first (with no near tie, exactly the reference's set). The recent window must be kept whole.
//
// Inputs: the family's G-KV cache (its 32-query window, of which the last query is the step's q),
// k, v, q_future. Outputs (sparse_step.h): kept_idx (this check), kept_len EXACT, O TOL over the
// impl's own set.
#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "attnbench/error.h"
#include "attnbench/thread_pool.h"
#include "scored_selection.h"

namespace attnbench::kvcomp {
namespace {

class Lessismore final : public ScoredSelection {
 public:
  Lessismore()
      : ScoredSelection({.name = "lessismore",
                         .summary = "per-head top-k merged rank by rank into one set for every head, plus a recency window; a decode step over it",
                         .catalog_id = "B-LESSISMORE",
                         .paper = "Hu et al. 2025, Less Is More: Training-Free Sparse Attention with Global Locality for Efficient Reasoning",
                         .spec_version = 1},
                        ScoreScope::per_sequence) {
    schema_.add({"budget", ParamType::Int, Value(int64_t{2048}), {}, 1.0, 1e7, {},
                 "tokens one decode step reads per KV head (K_b): the selected ones and the recency window"});
    schema_.add({"recent_ratio", ParamType::Float, Value(0.25), {}, 0.0, 1.0, {},
                 "the recency window's share of the budget: R = floor(budget·recent_ratio)"});
    add_n_future();
    schema_.add({"ties", ParamType::Bool, Value(false), {}, {}, {}, {},
                 "G-KV plants exact ties: odd prefix positions duplicate the key before them"});
  }

  bool selection_only() const override { return true; }

 protected:
  static int64_t recent(const Case& c) {
    return static_cast<int64_t>(std::floor(static_cast<double>(c.i64("budget")) * c.f64("recent_ratio")));
  }
  Keep keep(const Case& c) const override { return {0, std::min(recent(c), c.i64("kv_len"))}; }

  GkvConfig gkv(const Case& c) const override {
    GkvConfig cfg = ScoredSelection::gkv(c);
    cfg.ties = c.flag("ties");
    return cfg;
  }

  // The fp64 logits of every query head of sequence b over the candidates: [q_heads][C].
  static std::vector<double> logits(const Case& c, const TensorMap& in, int64_t b, int64_t C) {
    const int64_t Hq = c.i64("q_heads"), Hkv = c.i64("kv_heads"), G = Hq / Hkv, d = c.i64("head_dim"), T = c.i64("kv_len");
    const std::vector<double> q = rows_f64(in.at("q"), b * Hq, Hq, d);
    std::vector<double> out(Hq * C);
    for (int64_t g = 0; g < Hkv; ++g) {
      const std::vector<double> k = rows_f64(in.at("k"), (b * Hkv + g) * T, C, d);
      for (int64_t h = g * G; h < (g + 1) * G; ++h)
        for (int64_t j = 0; j < C; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < d; ++x) dot += q[h * d + x] * k[j * d + x];
          out[h * C + j] = dot;
        }
    }
    return out;
  }

  int64_t selected(const Case& c) const { return selection(c).top_k; }

  // −key of every candidate (keys below): the family's select keeps the k largest.
  void score(const Case& c, const TensorMap& in, int64_t b, double* out) const override {
    const SelectionParams s = selection(c);
    const int64_t C = s.candidates, H = s.q_heads, k = s.top_k;
    const std::vector<double> p = logits(c, in, b, C);
    std::vector<int64_t> key(C, LLONG_MAX), order(C);
    for (int64_t h = 0; h < H; ++h) {
      const double* row = p.data() + h * C;
      std::iota(order.begin(), order.end(), 0);
      const auto better = [row](int64_t a, int64_t z) { return row[a] != row[z] ? row[a] > row[z] : a < z; };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
      for (int64_t rank = 0; rank < k; ++rank) key[order[rank]] = std::min(key[order[rank]], rank * H + h);
    }
    for (int64_t j = 0; j < C; ++j) out[j] = key[j] == LLONG_MAX ? -static_cast<double>((k + 1) * H) : -static_cast<double>(key[j]);
  }

  double tie_c(const Case&, const TensorMap&, int64_t) const override { return 0.0; }  // check_kept's own band

  std::optional<OutputCheck> check_kept(const Case& c, const TensorMap& in, const Reference&, const TensorMap& got) const override {
    const SelectionParams s = selection(c);
    OutputCheck out{"kept_idx", CheckClass::SET};
    const int64_t C = s.candidates, H = s.q_heads, d = s.head_dim, k = s.top_k, cap = s.capacity, T = s.kv_len;
    const HostTensor &idx = got.at("kept_idx"), &len = got.at("kept_len");
    int64_t exchanges = 0;
    for (int64_t b = 0; b < s.batch && out.pass; ++b) {
      // Each head's rank interval for every candidate, from its fp64 logits and its band.
      const std::vector<double> p = logits(c, in, b, C);
      std::vector<int64_t> key_lo(C, LLONG_MAX), key_hi(C, LLONG_MAX);
      std::vector<double> sorted(C);
      for (int64_t h = 0; h < H; ++h) {
        const double* row = p.data() + h * C;
        const int64_t g = h / s.group;
        const double band = 2.04 * static_cast<double>(d + 3) * 0x1p-24 * max_row_norm(in.at("q"), b * H + h, 1, d) *
                            max_row_norm(in.at("k"), (b * s.kv_heads + g) * T, C, d);
        std::copy_n(row, C, sorted.begin());
        std::sort(sorted.begin(), sorted.end());
        for (int64_t j = 0; j < C; ++j) {
          const auto above = [&](double x) { return C - (std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin()); };
          const auto at_least = [&](double x) { return C - (std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin()); };
          const int64_t lo = above(row[j] + band), hi = at_least(row[j] - band) - 1;
          if (lo < k) key_lo[j] = std::min(key_lo[j], lo * H + h);
          key_hi[j] = std::min(key_hi[j], std::min(hi, k) * H + h);
        }
      }
      for (int64_t g = 0; g < s.kv_heads && out.pass; ++g) {
        const int64_t row = b * s.kv_heads + g, n = static_cast<int64_t>(len.get(row));
        std::vector<char> kept(T, 0);
        for (int64_t i = 0; i < n; ++i) {
          const auto j = static_cast<int64_t>(idx.get(row * cap + i));
          if (j < 0 || j >= T) {
            out.pass = false;
            out.message = cat("row [", b, ",", g, "] keeps index ", j, ", outside [0, ", T, ")");
            break;
          }
          kept[j] = 1;
        }
        if (!out.pass) break;
        int64_t chosen = 0, worst_kept = -1, best_dropped = -1;
        for (int64_t j = C; j < T; ++j)
          if (!kept[j]) {
            out.pass = false;
            out.message = cat("row [", b, ",", g, "] drops token ", j, " of the recency window [", C, ", ", T, ")");
          }
        if (!out.pass) break;
        for (int64_t j = 0; j < C; ++j) {
          if (kept[j]) {
            ++chosen;
            if (worst_kept < 0 || key_lo[j] > key_lo[worst_kept]) worst_kept = j;
          } else if (best_dropped < 0 || key_hi[j] < key_hi[best_dropped]) {
            best_dropped = j;
          }
        }
        if (chosen != k) {
          out.pass = false;
          out.message = cat("row [", b, ",", g, "] selects ", chosen, " tokens, the method ", k);
        } else if (worst_kept >= 0 && best_dropped >= 0 && key_lo[worst_kept] > key_hi[best_dropped]) {
          out.pass = false;
          out.message = cat("row [", b, ",", g, "] keeps token ", worst_kept, " (merged rank ≥ ", key_lo[worst_kept],
                            ") over token ", best_dropped, " (merged rank ≤ ", key_hi[best_dropped], ")");
        }
        // Exchanges against the exact order (for the record): kept tokens whose exact key is not among the k smallest.
        for (int64_t j = 0; j < C; ++j) exchanges += kept[j] && key_lo[j] != key_hi[j] ? 1 : 0;
      }
    }
    out.metrics["n_near_tie_kept"] = exchanges;
    return out;
  }

  // The logits read every candidate key once per KV head; a multiply-add per element and head.
  Work score_work(const Case& c) const override {
    const SelectionParams s = selection(c);
    const double es = static_cast<double>(dtype_size(c.dtype)), d = static_cast<double>(s.head_dim);
    const double keys = static_cast<double>(cache_rows(s)) * s.candidates;
    return {2 * keys * d * s.group, keys * d * es + static_cast<double>(s.batch) * s.q_heads * d * es, Bound::read};
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Lessismore);
