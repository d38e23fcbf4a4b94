// The KV-compression family's contract: a method that keeps, for every (sequence, KV head), a
// forced set of tokens plus its best-scored candidates, and returns the compacted cache. A method
// is its parameters, its forced set and its score function; this base owns the rest, once:
//
//   schema        batch, q_heads, kv_heads, head_dim, kv_len (q_heads % kv_heads == 0), then the
//                 method's own parameters, n_future among them (held-out queries for quality)
//   inputs        G-KV (gkv.h) from the method's GkvConfig; q_obs dropped when nothing reads it
//   selection     per row (b, g): forced [0, sinks) and the last `recent` tokens; the candidates
//                 between them ranked by the method's fp64 scores (per KV head, or one ranking per
//                 sequence), the best kept by the tie rule (larger score, then smaller index);
//                 everything kept when the budget covers the sequence
//   budgets       BudgetPolicy: the same for every row (a fixed or per-layer budget), given per
//                 row by the method (HeadKV, DuoAttention), or AdaKV's per-row floor with the rest
//                 chosen across the sequence's KV heads
//   outputs       kept_idx [batch, kv_heads, capacity] i32 ascending, −1 beyond kept_len;
//                 kept_len [batch, kv_heads] i32; k_kept, v_kept [batch, kv_heads, capacity,
//                 head_dim] in the case dtype, zeros beyond kept_len
//   checks        scored methods: SET on kept_idx with the method's tie band (check-only scores
//                 [batch, kv_heads, kv_len] f64, +inf on forced tokens, and tie_c [batch, kv_heads]);
//                 positional ones (scored() false: every candidate evicted): EXACT. kept_len EXACT; k_kept, v_kept
//                 equal to k, v gathered at the impl's own kept_idx, bit for bit
//   work          the method's scoring plus the compaction (kept K and V rows read, outputs written)
//   quality       compression, KV bytes and the fidelity of exact attention over the compacted
//                 cache for held-out future queries (compacted_cache.h), and compression_point =
//                 kv_len / budget, the point the case asked for (kvpress's 1 / (1 − ratio)), by
//                 which the leaderboard ranks methods
//   companions    gqa decode over the compacted cache and over the full one
// A merging method (merge_rule(): ZeroMerge) adds M slots per row holding the means of its evicted
// tokens in contiguous groups, with their weights (merged_slots.h), checked against the groups of
// the impl's own kept set; the family's quality attends over them with the λ·ln w compensation.
// A selection-only method (selection_only(): tokenselect, quest) keeps the whole cache: its
// selection is the same, and instead of k_kept and v_kept it yields the decode step that reads the
// kept keys in place (sparse_step.h): q in the inputs, O in the outputs, bytes read per step in
// its quality, gather_decode and full decode as companions; with a selection cache
// (selection_cache(): TokenSelect's) a step whose query is close to the cached one reuses its set.
//
// Every backend has the same split: the method's score kernel fills a [score rows, candidates]
// f32 buffer (optionally through the shared pooling stage), and the shared stages select and
// gather (impls/<backend>/kvcomp/). docs/adding-a-method.md walks through a new scorer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "attnbench/method.h"
#include "compacted_cache.h"  // rows_f64 for score functions
#include "eviction_step.h"
#include "gkv.h"
#include "merged_slots.h"
#include "selection_cache.h"
#include "scored_selection_common.h"

namespace attnbench::kvcomp {

// The forced part of a row's selection.
struct Keep {
  int64_t sinks = 0;   // tokens [0, sinks)
  int64_t recent = 0;  // the last `recent` tokens (1: the last token alone)
};

enum class ScoreScope {
  per_kv_head,   // a ranking per (sequence, KV head): score row = b·kv_heads + g
  per_sequence,  // one ranking per sequence shared by its KV heads (TOVA, LessIsMore): row = b
};

enum class BudgetPolicy {
  uniform,     // every row keeps budget(c) tokens (a fixed budget, or a per-layer one: PyramidKV)
  per_row,     // row r keeps row_budgets(c)[r]: a plan of the case (HeadKV's capacities from its head scores)
  head_floor,  // AdaKV: of k = budget − forced candidates per row on average, each row keeps its
               // best f = min(floor_candidates(c), k); the sequence's remaining kv_heads·(k − f)
               // are its best candidates across all its KV heads (ties: smaller g·kv_len + j)
};

class ScoredSelection : public Method {
 public:
  const MethodInfo& info() const final { return info_; }
  const ParamSchema& schema() const final { return schema_; }
  std::vector<OutputDecl> outputs(const Case& c) const final;
  TensorMap inputs(const Case& c) const final;
  // The prefill's G-KV tensors are replayed before a window is cut or page bounds are derived.
  bool replays_own_inputs(const Case& c) const final { return c.phase != "decode"; }
  Reference reference(const Case& c, const TensorMap& in) const final;
  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const final;
  Work work(const Case& c) const final;
  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const final;
  // No baseline: the compression step has no uncompressed counterpart to be faster than. What a
  // method buys is the decode over the compacted cache, timed against the full cache.
  std::vector<RelatedCase> companions(const Case& c) const final;

  // The family's view of a case: shapes and counts, no input values (every backend's plan).
  SelectionParams selection(const Case& c) const;
  ScoreScope scope() const { return scope_; }
  // Whether the cache stays whole and each decode step reads the kept set (sparse_step.h).
  virtual bool selection_only() const { return false; }
  // Whether (and into how many slots per row) the evicted tokens are merged (merged_slots.h).
  virtual MergeRule merge_rule(const Case& /*c*/) const { return {}; }
  // A selection-only method's selection cache (selection_cache.h): off unless the method has one.
  virtual SelectionCacheRule selection_cache(const Case& /*c*/) const { return {}; }
  BudgetPolicy policy() const { return policy_; }
  // Every row's kept count (forced tokens included) under a uniform or per-row budget: a function
  // of the case alone, which every backend's impl uploads with per-row budgets.
  std::vector<int64_t> kept_counts(const Case& c) const;
  // Phase decode (methods that called add_decode_step()): the step of a case (eviction_step.h).
  StepSpec step_spec(const Case& c) const;

 protected:
  ScoredSelection(MethodInfo info, ScoreScope scope = ScoreScope::per_kv_head, BudgetPolicy policy = BudgetPolicy::uniform);
  // The held-out queries of quality(), a parameter of every method (in the method's schema order).
  void add_n_future();
  // `layer` of `n_layers` (at least min_layers), with the rule layer < n_layers: for budgets
  // planned over a model's layers (PyramidKV, HeadKV, DuoAttention).
  void add_layer(int64_t min_layers);
  // Gives the method phases prefill (the one-shot compression) and decode (one eviction per
  // generated token, eviction_step.h), whose rule is step_rule(); call after the schema's budget.
  void add_decode_step();

  // The prefill phase's inputs (default: G-KV, q_obs dropped when nothing reads it).
  virtual TensorMap prefill_inputs(const Case& c) const;

  // --- what a method provides -------------------------------------------------------------------
  virtual Keep keep(const Case& c) const = 0;
  // Kept tokens per row, forced ones included: the uniform budget, the mean over rows of a
  // head_floor budget (both the parameter `budget`), or under per_row the rounded mean of this
  // case's row_budgets() (the compacted cache's nominal length; the parameter may average over a
  // whole model, as HeadKV's and DuoAttention's do).
  virtual int64_t budget(const Case& c) const;
  // The fp64 scores of the candidates of score row `row` (tokens sinks .. sinks + n − 1): higher
  // is kept. Called in parallel over rows; each call sequential. Called only when scored() and
  // the row has candidates.
  virtual void score(const Case& c, const TensorMap& in, int64_t row, double* scores) const;
  // c_rel of the SET tie band of a score row (docs/methodology.md "SET"): a bound on the relative
  // error of the impls' fp32 scores, times two.
  virtual double tie_c(const Case& c, const TensorMap& in, int64_t row) const;
  // Flops and bytes of scoring; the compaction's are added by the family.
  virtual Work score_work(const Case& /*c*/) const { return {0, 0, Bound::copy}; }
  // The G-KV cache the method compresses (default: a 32-query window, snapkv's default, so
  // methods at equal shapes compress the same cache and meet the same future queries).
  virtual GkvConfig gkv(const Case& c) const;
  // Whether the score function reads the window's queries q_obs (dropped from the inputs if not).
  virtual bool reads_window_queries() const { return false; }
  // Whether the method ranks candidates at all (false: positions only, checked EXACT).
  virtual bool scored() const { return true; }

  // A method whose kept set is not the top of one fp score per token (lessismore: a union of
  // per-head rankings) checks kept_idx itself; the lengths and the step or the gathers stay the
  // family's. nullopt: the family's check (SET with tie_c's band, or EXACT).
  virtual std::optional<OutputCheck> check_kept(const Case& /*c*/, const TensorMap& /*in*/, const Reference& /*ref*/,
                                                const TensorMap& /*got*/) const {
    return std::nullopt;
  }
  // BudgetPolicy::per_row: each row's kept count, forced included (at most capacity(c)), from the
  // case alone (head statistics a model has before it sees the prompt).
  virtual std::vector<int64_t> row_budgets(const Case& c) const;
  // BudgetPolicy::head_floor: the candidates every row keeps by its own ranking.
  virtual int64_t floor_candidates(const Case& /*c*/) const { return 0; }
  // Phase decode: which tokens the step never evicts and how its scores carry over.
  virtual StepRule step_rule(const Case& c) const;
  // The largest kept count any row may have: kept_idx's last dimension (per_row: the largest of
  // row_budgets(), at least 1).
  virtual int64_t capacity(const Case& c) const;

  // Helpers for score functions.
  // out[j] = the max or mean of in[j − r .. j + r] ∩ [0, n) (r = (kernel − 1)/2), padding ignored,
  // or their sum / kernel (pool_avg_padded: padding counted as zeros).
  static void pool(const double* in, int64_t n, int64_t kernel, PoolMode mode, double* out);
  // Largest Euclidean norm of rows [first, first + count) of a [.., d] tensor.
  static double max_row_norm(const HostTensor& t, int64_t first, int64_t count, int64_t d);

  ParamSchema schema_;

 private:
  // check() of a selection-only case with a selection cache: cache_hit SEMI, then the kept set
  // against the impl's own decision per row (the cached set exactly, or the fresh set's SET check).
  CheckReport check_with_cache(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got,
                               const std::function<CheckReport(OutputCheck, OutputCheck)>& finish) const;
  // The compacted cache's shape; with ragged rows, `kept` is budget(c), the mean kept count.
  CompactedCache compacted(const Case& c) const;

  MethodInfo info_;
  ScoreScope scope_;
  BudgetPolicy policy_;
};

}  // namespace attnbench::kvcomp
