// zeromerge — ZeroMerge's prefill init: score the prompt's keys by the decayed attention of every
// prompt query, keep the tail and the best-scored others, and merge everything else into M dense
// slots that stand for the tokens they average. Its decode steps are zeromerge_decode (the ring
// and the merge, one token at a time). Catalog: B-ZEROMERGE. Paper: Liu et al. 2025, ZeroMerge:
// Parameter-Free KV Cache Compression for Memory-Efficient Long-Context LLMs. Cross-checked
// against the authors' mergekv/mergekv.py (cache_init, topk_split, score_scaled_dot_product_attention).
//
// Semantics (spec_version 1), per sequence b and KV head g, T = kv_len, s = 1/√head_dim, the
// budget B slots, the tail R, M dense slots:
//   score_j = Σ_{i ≥ j} γ^(T−1−i) · mean_{h in the group} softmax_j(s·q_{h,i}·k_{g,j}) over the
//             prompt's queries i (query i sees keys j ≤ i)
//   kept    the last R tokens and the top B − R − M of the others by score (the tie rule: larger
//           score, then smaller index), ascending (kept_idx, k_kept, v_kept)
//   merged  the rest in order, cut into M contiguous groups (the first (rest mod M) one longer),
//           each averaged into a slot of weight its size (k_merged, v_merged, w_merged; the
//           family's merged slots, merged_slots.h)
//   T ≤ B   every token kept, the dense slots empty (weight 0)
// The cache the decode steps read is [merged | kept]: the authors' [dense | top | tail], each slot
// read with its logits raised by λ·ln w.
// In the family's terms: the SnapKV scorer over every prompt query (as h2o's) with the decay
// log_decay = ln γ, no pooling; recent = R forced; a uniform budget of B − M kept tokens; merge
// rule M slots, λ.
//
// Differences from the authors' code, and why:
//   - scores are the group's mean, not its sum (de_repeat_kv), and divided by T: the same ranking,
//     the family's scorer. The slots' scores are not outputs of this phase: the cache attention
//     reads is, and zeromerge_decode plants its own start (with the authors' sums).
//   - budget, tail and dense are slot counts; tail 0 means the authors' default max(2, ⌊B/10⌋).
//   - the top region is ascending by position (torch.topk: descending score), ties to the smaller
//     index (torch.topk leaves them open); fp32 scores (the authors': the model dtype).
//   - T ≤ B keeps everything, as the authors' cache_init does; the dense slots exist but are empty.
//
// Inputs: the family's G-KV cache with every prompt query (q_obs [batch, q_heads, kv_len,
// head_dim], gkv.h's prompt option), k, v, q_future. Outputs: the compacted cache (kept_idx SET
// with the scorer's tie band, kept_len, k_kept, v_kept) and the merged slots (TOL, weights EXACT).
// The column sums are O(T²·d) per head, like h2o's: kv.json's rows stop at 4k prompts.
#include <algorithm>
#include <cmath>

#include "attnbench/error.h"
#include "snapkv_scorer.h"

namespace attnbench::kvcomp {
namespace {

int64_t zeromerge_tail(const Params& p) {
  const int64_t tail = p.i64("tail");
  return tail > 0 ? tail : std::max<int64_t>(2, p.i64("budget") / 10);
}

class Zeromerge final : public SnapkvScored {
 public:
  Zeromerge()
      : SnapkvScored({.name = "zeromerge",
                      .summary = "ZeroMerge's prefill: decayed attention of every prompt query ranks the keys, the tail and the best kept, the rest merged into dense slots",
                      .catalog_id = "B-ZEROMERGE",
                      .paper = "Liu et al. 2025, ZeroMerge: Parameter-Free KV Cache Compression for Memory-Efficient Long-Context LLMs",
                      .spec_version = 1}) {
    add_budget("slots per KV head: the dense slots, the kept tokens and the tail");
    schema_.add({"tail", ParamType::Int, Value(int64_t{0}), {}, 0.0, 1e6, {},
                 "R: the last tokens always kept (0: max(2, budget/10), the authors' default)"});
    schema_.add({"dense", ParamType::Int, Value(int64_t{1}), {}, 1.0, 1e6, {}, "M: slots the evicted tokens are merged into"});
    schema_.add({"lambda", ParamType::Float, Value(1.0), {}, 0.0, 16.0, {}, "compensation: a slot of weight w gains λ·log w in the logits"});
    schema_.add({"decay", ParamType::Float, Value(0.98), {}, 1e-3, 1.0, {}, "γ: query i's attention counts γ^(kv_len − 1 − i)"});
    add_n_future();
    schema_.rule("zeromerge: budget > tail + dense, tail >= 2", [](const Params& p, const std::string&) -> std::string {
      const int64_t B = p.i64("budget"), R = zeromerge_tail(p), M = p.i64("dense");
      if (R < 2) return cat("tail=", R, ": ZeroMerge keeps at least 2 recent tokens");
      if (B <= R + M) return cat("budget=", B, " leaves no kept slot beside tail=", R, " and dense=", M, " (needs budget > tail + dense)");
      return {};
    });
  }

  SnapkvParams scorer(const Case& c) const override {
    SnapkvParams m = prompt_scorer(c, false);
    m.log_decay = static_cast<float>(std::log(c.f64("decay")));
    return m;
  }
  bool scores_every_prompt_query() const override { return true; }

  MergeRule merge_rule(const Case& c) const override { return {c.i64("dense"), c.f64("lambda")}; }

 protected:
  Keep keep(const Case& c) const override { return {0, std::min(zeromerge_tail(c.params), c.i64("kv_len"))}; }

  // Kept tokens: every token when the prompt fits the budget, else the budget less the dense slots.
  int64_t budget(const Case& c) const override {
    const int64_t T = c.i64("kv_len"), B = c.i64("budget");
    return T <= B ? T : B - c.i64("dense");
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Zeromerge);
