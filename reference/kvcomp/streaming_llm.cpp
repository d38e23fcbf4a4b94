// streaming_llm — attention sinks plus a recent window: one-shot KV-cache compression after
// prefill that looks at positions only. Catalog: B-STREAMINGLLM (METHODS.md). Paper: Xiao et al.
// 2024, Efficient Streaming Language Models with Attention Sinks. Cross-checked against kvpress's
// StreamingLLMPress.
//
// Semantics (spec_version 1), per sequence b and KV head g, with T = kv_len, n = min(budget, T),
// S = n_sink:
//   kept = [0, S) ∪ [T − (n − S), T)   when budget < T (the sinks, then the last n − S tokens);
//   kept = [0, T)                      when budget ≥ T (nothing to evict).
//   budget counts every kept token, the sinks included: n_sink ≤ budget is a schema rule. The set
//   is the same for every head and every sequence; kept indices ascending.
// kvpress prunes n_pruned = ⌊T·ratio⌋ tokens right after the sinks, which is this set with
// budget = T − n_pruned. Kept keys keep their original positions (no re-rotation, METHODS.md
// family B "Positions").
//
// Inputs (G-KV, gkv.h; case dtype): k, v [batch, kv_heads, kv_len, head_dim], and q_future
// [batch, q_heads, n_future, head_dim], held-out later queries used only by quality(). G-KV is
// generated with snapkv's default 32-query window (its queries dropped: nothing here reads them),
// so at equal shapes streaming_llm and snapkv with obs_window=32 compress the same cache and are
// judged on the same future queries.
//
// Outputs, rows (b, g), capacity `budget`, every row's length n:
//   kept_idx [batch, kv_heads, budget]            i32   EXACT, length kept_len, pad −1, ascending
//   kept_len [batch, kv_heads]                    i32   EXACT
//   k_kept   [batch, kv_heads, budget, head_dim]  dtype EXACT: k gathered at the impl's own
//   v_kept   [batch, kv_heads, budget, head_dim]  dtype        kept_idx, bit for bit; 0 beyond n
#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "compacted_cache.h"
#include "gkv.h"
#include "streaming_llm_common.h"

namespace attnbench::kvcomp {

StreamingShape streaming_shape(const Case& c) {
  return {c.i64("batch"),  c.i64("q_heads"), c.i64("kv_heads"), c.i64("head_dim"),
          c.i64("kv_len"), c.i64("budget"),  c.i64("n_sink"),   c.i64("n_future")};
}

namespace {

constexpr int kSpecVersion = 1;
constexpr int64_t kGkvWindow = 32;  // snapkv's default obs_window: the same G-KV cache as snapkv's

CompactedCache compacted(const StreamingShape& s) {
  return {s.batch, s.q_heads, s.kv_heads, s.head_dim, s.kv_len, s.budget, s.kept(), s.n_future};
}

class StreamingLlm final : public Method {
 public:
  StreamingLlm() {
    info_ = {.name = "streaming_llm",
             .family = "kvcomp",
             .summary = "attention sinks plus a recent window: keep the first n_sink tokens and the last budget − n_sink",
             .catalog_id = "B-STREAMINGLLM",
             .paper = "Xiao et al. 2024, Efficient Streaming Language Models with Attention Sinks",
             .spec_version = kSpecVersion,
             .phases = {},
             .dtypes = {DType::f32, DType::f16, DType::bf16}};
    add_cache_params(schema_);
    schema_.add({"budget", ParamType::Int, Value(int64_t{256}), {}, 1.0, 1e7, {},
                 "kept tokens per KV head, the sinks included"});
    schema_.add({"n_sink", ParamType::Int, Value(int64_t{4}), {}, 0.0, 1e6, {},
                 "attention sinks: the first tokens, always kept"});
    schema_.add({"n_future", ParamType::Int, Value(int64_t{16}), {}, 0.0, 4096.0, {},
                 "held-out later queries for quality"});
    schema_.rule("n_sink <= budget", [](const Params& p, const std::string&) -> std::string {
      if (p.i64("n_sink") <= p.i64("budget")) return {};
      return cat("budget=", p.i64("budget"), " is smaller than n_sink=", p.i64("n_sink"),
                 "; the budget counts the sinks, which are always kept");
    });
  }

  const MethodInfo& info() const override { return info_; }
  const ParamSchema& schema() const override { return schema_; }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    return compacted_cache_outputs(compacted(streaming_shape(c)), c.dtype, CheckClass::EXACT);
  }

  TensorMap inputs(const Case& c) const override {
    const StreamingShape s = streaming_shape(c);
    GkvConfig cfg;
    cfg.batch = s.batch;
    cfg.q_heads = s.q_heads;
    cfg.kv_heads = s.kv_heads;
    cfg.head_dim = s.head_dim;
    cfg.kv_len = s.kv_len;
    cfg.n_obs = kGkvWindow;
    cfg.n_future = s.n_future;
    TensorMap in = generate_gkv(cfg, c.dtype, c.seed);
    in.erase("q_obs");
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const StreamingShape s = streaming_shape(c);
    const int64_t rows = s.batch * s.kv_heads, d = s.head_dim, n = s.kept();
    HostTensor idx("kept_idx", DType::i32, {s.batch, s.kv_heads, s.budget});
    HostTensor len("kept_len", DType::i32, {s.batch, s.kv_heads});
    HostTensor k_kept("k_kept", DType::f64, {s.batch, s.kv_heads, s.budget, d});
    HostTensor v_kept("v_kept", DType::f64, {s.batch, s.kv_heads, s.budget, d});
    idx.fill(-1);
    for (int64_t bg = 0; bg < rows; ++bg) {
      len.set(bg, static_cast<double>(n));
      for (int64_t r = 0; r < n; ++r) {
        const int64_t j = r < s.n_sink ? r : s.kv_len - (n - r);  // the sinks, then the last n − S
        idx.set(bg * s.budget + r, static_cast<double>(j));
        in.at("k").get_row((bg * s.kv_len + j) * d, d, k_kept.data<double>() + (bg * s.budget + r) * d);
        in.at("v").get_row((bg * s.kv_len + j) * d, d, v_kept.data<double>() + (bg * s.budget + r) * d);
      }
    }
    Reference ref;
    ref.tensors.emplace("kept_idx", std::move(idx));
    ref.tensors.emplace("kept_len", std::move(len));
    ref.tensors.emplace("k_kept", std::move(k_kept));
    ref.tensors.emplace("v_kept", std::move(v_kept));
    return ref;
  }

  CheckReport check(const Case& c, const TensorMap& in, const Reference& ref, const TensorMap& got) const override {
    const auto decls = outputs(c);
    OutputCheck idx = check_exact(decls[0], ref.tensors.at("kept_idx"), got.at("kept_idx"), &got.at("kept_len"));
    return check_compacted_cache(decls, in, ref, got, std::move(idx));
  }

  // No arithmetic: the kept rows of K and V are read once; indices, lengths and the compacted K/V
  // written at full capacity. Judged by bandwidth.
  Work work(const Case& c) const override {
    const StreamingShape s = streaming_shape(c);
    const double es = static_cast<double>(dtype_size(c.dtype)), d = static_cast<double>(s.head_dim);
    const double rows = static_cast<double>(s.batch * s.kv_heads), cap = static_cast<double>(s.budget);
    Work w;
    w.flops = 0;
    w.bytes = rows * (2 * static_cast<double>(s.kept()) * d * es + cap * 4 + 4 + 2 * cap * d * es);
    w.bound = Bound::memory;
    return w;
  }

  Json quality(const Case& c, const TensorMap& in, const TensorMap& out) const override {
    return compacted_cache_quality(compacted(streaming_shape(c)), c.dtype, in, out);
  }

  // No baseline (as snapkv): the decode over the compacted cache is timed against the full cache.
  std::vector<RelatedCase> companions(const Case& c) const override {
    return decode_companions(compacted(streaming_shape(c)), c.dtype);
  }

 private:
  MethodInfo info_;
  ParamSchema schema_;
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::StreamingLlm);
