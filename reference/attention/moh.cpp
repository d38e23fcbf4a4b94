// moh — mixture-of-head attention: each token runs its shared heads and the top routed_k of its
// routed heads; a head that does not run is skipped, not computed and masked.
// Catalog: A-MOH. Paper: Jin et al. 2024, MoH: Multi-Head Attention as Mixture-of-Head Attention.
// Math and layout: moh_common.h (routers, gates), attention_common.h (the attention, head_sparse).
// Measured against gqa: the same attention with every head running.
//
// Choices, checked against the authors' code (SkyworkAI/MoH: MoH-DiT's MoHAttention and
// MoH-LLaMA3's continue-tuned attention):
// - The method starts after the Q/K/V projections and stops before W_O: O holds γ·head output per
//   head in the attention layout, the concat W_O multiplies (as gqa stops before W_O).
// - router=norm (MoH-LLaMA3, the default): shared = the first shared_heads, score = ‖q_h‖₂ of the
//   pre-RoPE query as given; the authors divide the scores by their std over the routed heads and
//   take a softmax before the top-k: both are increasing, so the kept heads are the same, and the
//   gates are 1 for every running head whatever the probabilities — neither is computed.
// - router=learned (MoH's ViT/DiT router): W_s, W_r and W_0 are one matrix W [heads + 2, d_model]
//   (bias-free, as the authors' nn.Linear(bias=False)); its logits are computed once per token in
//   fp32. Routed gates: softmax, top routed_k kept, renormalised over the kept, times routed_k;
//   shared gates: shared_heads·softmax; balance α = 2·softmax(W_0·x). With no shared heads or no
//   routed ones α is 1 (the authors' routed=0 path uses only the shared gates).
// - Ties keep the lower head index (torch.topk leaves them unspecified): the check accepts any
//   exchange within the fp32 tie band of the scores (SET), and then holds O, LSE and the gates to
//   the reference recomputed for the impl's own kept heads.
// - The authors' load-balancing loss is training-only and not computed. Their router reads the
//   token's hidden state x_t; here x is a seeded input of d_model (4096, Llama-3-8B's hidden size).
// - LSE of a running head is its attention's LSE (ungated); −inf for a skipped head, like a row
//   with no visible key.
// - Every attention parameter of gqa applies (causal, ragged, head_lengths, softcap, alibi).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attnbench/check.h"
#include "attnbench/check_set.h"
#include "attnbench/error.h"
#include "attnbench/inputs.h"
#include "attnbench/thread_pool.h"
#include "attention_spec.h"
#include "moh_router.h"

namespace attnbench::moh {

MohStages moh_stages(const Case& c) {
  MohStages st;
  const attention::AttentionParams a = attention::attention_params(c);
  RouterParams& r = st.router;
  r.batch = a.batch;
  r.heads = a.q_heads;
  r.q_len = a.q_len;
  r.head_dim = a.head_dim;
  r.shared_heads = static_cast<int32_t>(c.i64("shared_heads"));
  r.routed_k = static_cast<int32_t>(c.i64("routed_k"));
  r.learned = c.str("router") == "learned";
  r.logit_row = r.heads + 2;
  if (r.learned) {
    const auto d = static_cast<int32_t>(c.i64("d_model"));
    // logits[t][n] = Σ_x x[t][x]·W[n][x] over the batch's tokens t = b·q_len + i as one problem
    // (W as [n][k]), so every block of rows shares each widened W panel.
    st.router_logits = {.outer = 1, .inner = 1, .m = a.batch * a.q_len, .n = r.logit_row, .k = d, .pass = 0, .limit_rows = 0,
                        .x_outer = 0, .x_inner = 0, .x_row = d,
                        .w_inner = 0, .w_n = d, .w_k = 1,
                        .y_outer = 0, .y_inner = 0, .y_row = r.logit_row, .y_f32 = 1};
    st.logit_elements = int64_t{a.batch} * a.q_len * r.logit_row;
  }
  st.attention = a;
  st.attention.head_sparse = 1;
  return st;
}

class Moh final : public attention::AttentionSpec {
 public:
  Moh()
      : AttentionSpec({.name = "moh",
                       .summary = "mixture-of-head attention: shared heads plus the top-k routed heads per token, gated",
                       .catalog_id = "A-MOH",
                       .paper = "Jin et al. 2024, MoH: Multi-Head Attention as Mixture-of-Head Attention",
                       .spec_version = 1},
                      attention::HeadSharing::grouped) {
    ParamSchema& s = extend_schema();
    s.add({"router", ParamType::String, Value(std::string("norm")), {}, {}, {}, {"norm", "learned"},
           "norm: top-k by ‖q_h‖, binary gates (MoH-LLaMA3); learned: softmax gates from W·x (MoH's router)"});
    s.add({"shared_heads", ParamType::Int, Value(int64_t{16}), {}, 0.0, 1024.0, {}, "heads every token runs (the first ones)"});
    s.add({"routed_k", ParamType::Int, Value(int64_t{8}), {}, 0.0, 1024.0, {}, "routed heads each token runs, of q_heads − shared_heads"});
    s.add({"d_model", ParamType::Int, Value(int64_t{4096}), {}, 1.0, 65536.0, {}, "hidden size the learned router reads"});
    s.rule("shared_heads + routed_k in [1, q_heads]", [](const Params& p, const std::string&) -> std::string {
      const int64_t n = p.i64("shared_heads") + p.i64("routed_k");
      if (n >= 1 && n <= p.i64("q_heads")) return {};
      return cat("shared_heads + routed_k = ", n, ": each token runs between 1 and q_heads=", p.i64("q_heads"), " heads");
    });
  }

  std::vector<OutputDecl> outputs(const Case& c) const override {
    const MohStages st = moh_stages(c);
    const RouterParams& r = st.router;
    std::vector<OutputDecl> d = AttentionSpec::outputs(c);
    d[0].doc = "O [batch, q_heads, q_len, head_dim]: γ·softmax(scale·q·kᵀ)·v for each running head; 0 for the others";
    d[1].doc = "LSE [batch, q_heads, q_len]: log Σ_j exp(scale·q·k_j) for each running head; −inf for the others";
    OutputDecl gates{"gates", DType::f32, {r.batch, r.heads, r.q_len}, CheckClass::TOL};
    gates.doc = "gates [batch, q_heads, q_len]: γ of each head for each token; 0 for a head that does not run";
    OutputDecl idx{"heads_idx", DType::i32, {r.batch, r.q_len, active_heads(r)}, CheckClass::SET};
    idx.doc = "heads_idx [batch, q_len, shared_heads + routed_k]: the heads each token runs, ascending";
    OutputDecl scores{"scores", DType::f64, {r.batch, r.q_len, r.heads}, CheckClass::SET};
    scores.check_only = true;
    scores.doc = "scores [batch, q_len, q_heads]: fp64 router score of each routed head; +inf for shared heads";
    OutputDecl tie_c{"tie_c", DType::f64, {r.batch, r.q_len}, CheckClass::SET};
    tie_c.check_only = true;
    tie_c.doc = "tie_c [batch, q_len]: c_rel of the SET tie band (methodology.md)";
    OutputDecl head_out{"head_out", DType::f64, d[0].shape, CheckClass::TOL};
    head_out.check_only = true;
    head_out.doc = "head_out: every head's ungated attention, fp64";
    OutputDecl head_lse{"head_lse", DType::f64, d[1].shape, CheckClass::TOL};
    head_lse.check_only = true;
    head_lse.doc = "head_lse: every head's LSE, fp64";
    d.insert(d.end(), {gates, idx, scores, tie_c, head_out, head_lse});
    if (r.learned) {
      OutputDecl logits{"logits", DType::f64, {r.batch, r.q_len, r.logit_row}, CheckClass::TOL};
      logits.check_only = true;
      logits.doc = "logits [batch, q_len, q_heads + 2]: the learned router's logits, fp64";
      d.push_back(logits);
    }
    return d;
  }

  TensorMap inputs(const Case& c) const override {
    TensorMap in = AttentionSpec::inputs(c);
    const MohStages st = moh_stages(c);
    if (st.router.learned) {
      const int64_t d = c.i64("d_model");
      in.emplace("x", normal_tensor("x", c.dtype, {st.router.batch, st.router.q_len, d}, c.seed));
      // Scaled so the logits have unit variance, as a trained router's stay of order one.
      in.emplace("w_router", normal_tensor("w_router", c.dtype, {st.router.logit_row, d}, c.seed,
                                           1.0 / std::sqrt(static_cast<double>(d))));
    }
    return in;
  }

  Reference reference(const Case& c, const TensorMap& in) const override {
    const MohStages st = moh_stages(c);
    const RouterParams& r = st.router;
    const attention::AttentionParams& a = st.attention;
    Reference ref;
    // Every head's attention, the dense-then-gate oracle (the flops of the dense case).
    attention::DenseRows dense = attention::dense_rows(c, a, in, ref, AttentionSpec::work(c).flops);
    const int64_t H = r.heads, T = int64_t{r.batch} * r.q_len, n_act = active_heads(r), hd = r.head_dim;
    HostTensor gates("gates", DType::f64, {r.batch, H, r.q_len}), gates32("gates", DType::f64, gates.shape());
    HostTensor idx("heads_idx", DType::i32, {r.batch, r.q_len, n_act});
    HostTensor scores("scores", DType::f64, {r.batch, r.q_len, H}), tie_c("tie_c", DType::f64, {r.batch, r.q_len});
    HostTensor logits("logits", DType::f64, {r.batch, r.q_len, r.logit_row});
    harness_pool().parallel_for(T, [&](int64_t begin, int64_t end) {
      std::vector<double> row, w, g(H);
      std::vector<float> row32, w32, l32(r.logit_row), g32(H);
      std::vector<char> kept(H);
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / r.q_len, i = t % r.q_len;
        double* sc = scores.data<double>() + t * H;
        double spread = 0;  // what bounds an fp32 score's error, per score
        if (!r.learned) {
          row.resize(hd);
          for (int64_t h = 0; h < H; ++h) {
            in.at("q").get_row(((b * H + h) * r.q_len + i) * hd, hd, row.data());
            double sq = 0;
            for (double v : row) sq += v * v;
            sc[h] = std::sqrt(sq);
          }
        } else {
          const int64_t D = c.i64("d_model");
          row.resize(D);
          row32.resize(D);
          w.resize(D);
          w32.resize(D);
          in.at("x").get_row(t * D, D, row.data());
          in.at("x").get_row(t * D, D, row32.data());
          double* lg = logits.data<double>() + t * r.logit_row;
          for (int64_t n = 0; n < r.logit_row; ++n) {
            in.at("w_router").get_row(n * D, D, w.data());
            in.at("w_router").get_row(n * D, D, w32.data());
            double dot = 0, mag = 0;
            float dot32 = 0;
            for (int64_t x = 0; x < D; ++x) {
              dot += w[x] * row[x];
              mag += std::fabs(w[x] * row[x]);
              dot32 += w32[x] * row32[x];
            }
            lg[n] = dot;
            l32[n] = dot32;
            spread = std::max(spread, mag);
          }
          for (int64_t h = 0; h < H; ++h) sc[h] = lg[h];
        }
        kept_by_score(r, sc, kept.data());
        if (r.learned) {
          learned_gates(r, logits.data<double>() + t * r.logit_row, kept.data(), g.data());
          learned_gates(r, l32.data(), kept.data(), g32.data());
        } else {
          for (int64_t h = 0; h < H; ++h) g[h] = g32[h] = kept[h] ? 1.0f : 0.0f;
        }
        double s_k = INFINITY;
        for (int64_t h = r.shared_heads; h < H; ++h)
          if (kept[h]) s_k = std::min(s_k, sc[h]);
        // tie_c = 2ρ/ε = ρ/u for ρ the relative error of an fp32 score (methodology.md "c_rel for
        // moh"): ‖q‖ sums head_dim positive squares, ρ ≤ (head_dim/2 + 1)·u after the root, taken
        // twice for margin; a logit's error is at most d_model·u·Σ|w·x|, relative to the threshold.
        tie_c.set(t, r.learned ? static_cast<double>(c.i64("d_model")) * spread / std::max(std::fabs(s_k), 1e-30)
                               : 2.0 * (hd / 2.0 + 1.0));
        for (int64_t h = 0; h < r.shared_heads; ++h) sc[h] = INFINITY;
        for (int64_t h = 0, n = 0; h < H; ++h) {
          gates.set((b * H + h) * r.q_len + i, g[h]);
          gates32.set((b * H + h) * r.q_len + i, g32[h]);
          if (kept[h]) idx.set(t * n_act + n++, static_cast<double>(h));
        }
      }
    });
    const RowSelection sel{ref.checked_rows, ref.total_rows};
    // The baseline gates one storage-precision head output by its fp32 gate, rounded once.
    HostTensor o("O", DType::f64, dense.o.shape()), o_base("O", DType::f64, dense.o.shape());
    HostTensor lse("LSE", DType::f64, dense.lse.shape()), lse_base("LSE", DType::f64, dense.lse.shape());
    for (int64_t row = 0; row < gates.numel(); ++row) {
      const double g = gates.get(row), g32 = gates32.get(row);
      for (int64_t x = 0; x < hd; ++x) {
        const int64_t e = row * hd + x;
        o.set(e, g == 0 ? 0.0 : g * dense.o.get(e));
        o_base.set(e, g == 0 ? 0.0 : round_to(c.dtype, static_cast<float>(g32) * static_cast<float>(dense.o_base.get(e))));
      }
      lse.set(row, g == 0 ? -INFINITY : dense.lse.get(row));
      lse_base.set(row, g == 0 ? -INFINITY : dense.lse_base.get(row));
    }
    ref.baseline_err["O"] = max_abs_diff(o, o_base, sel);
    ref.baseline_err["LSE"] = max_abs_diff(lse, lse_base, sel);
    ref.baseline_err["gates"] = max_abs_diff(gates, gates32);
    ref.tensors.emplace("O", std::move(o));
    ref.tensors.emplace("LSE", std::move(lse));
    ref.tensors.emplace("gates", std::move(gates));
    ref.tensors.emplace("heads_idx", std::move(idx));
    ref.tensors.emplace("scores", std::move(scores));
    ref.tensors.emplace("tie_c", std::move(tie_c));
    ref.tensors.emplace("head_out", std::move(dense.o));
    ref.tensors.emplace("head_lse", std::move(dense.lse));
    if (r.learned) ref.tensors.emplace("logits", std::move(logits));
    return ref;
  }

  // heads_idx by SET; then O, LSE and the gates against the reference recomputed for the heads the
  // impl kept (a tie exchange changes which heads run), by the TOL gates of the reference's own.
  CheckReport check(const Case& c, const TensorMap& /*inputs*/, const Reference& ref, const TensorMap& got) const override {
    const MohStages st = moh_stages(c);
    const RouterParams& r = st.router;
    const std::vector<OutputDecl> decls = outputs(c);
    const auto decl = [&](const char* name) {
      return *std::find_if(decls.begin(), decls.end(), [&](const OutputDecl& d) { return d.name == name; });
    };
    const int64_t H = r.heads, T = int64_t{r.batch} * r.q_len, n_act = active_heads(r), hd = r.head_dim;
    const HostTensor& got_idx = got.at("heads_idx");
    CheckReport report;
    // The impl's kept heads per token, if they are distinct, ascending heads.
    std::vector<char> kept(T * H, 0);
    bool valid = true;
    for (int64_t t = 0; t < T && valid; ++t)
      for (int64_t n = 0; n < n_act; ++n) {
        const auto h = static_cast<int64_t>(got_idx.get(t * n_act + n));
        const auto prev = n ? static_cast<int64_t>(got_idx.get(t * n_act + n - 1)) : -1;
        if (h <= prev || h >= H) {
          report.outputs.push_back({"heads_idx", CheckClass::SET, false,
                                    cat("token ", t, ": heads_idx[", n, "] = ", h, " is not an ascending head below ", H),
                                    Json::object()});
          valid = false;
          break;
        }
        kept[t * H + h] = 1;
      }
    if (valid) {
      HostTensor len("heads_len", DType::i32, {r.batch, r.q_len});
      len.fill(static_cast<double>(n_act));
      TieBand band;
      for (int64_t t = 0; t < T; ++t) band.c_rel.push_back(ref.tensors.at("tie_c").get(t));
      report.outputs.push_back(
          check_set(decl("heads_idx"), ref.tensors.at("heads_idx"), len, got_idx, len, ref.tensors.at("scores"), band));
    }
    // The reference for the impl's selection (the reference's own where the impl's is unusable).
    if (!valid) {
      std::fill(kept.begin(), kept.end(), 0);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t n = 0; n < n_act; ++n) kept[t * H + static_cast<int64_t>(ref.tensors.at("heads_idx").get(t * n_act + n))] = 1;
    }
    const HostTensor &head_out = ref.tensors.at("head_out"), &head_lse = ref.tensors.at("head_lse");
    HostTensor o("O", DType::f64, head_out.shape()), lse("LSE", DType::f64, head_lse.shape());
    HostTensor gates("gates", DType::f64, {r.batch, H, r.q_len});
    {
      std::vector<double> g(H);
      for (int64_t t = 0; t < T; ++t) {
        const int64_t b = t / r.q_len, i = t % r.q_len;
        const char* k = kept.data() + t * H;
        if (r.learned) learned_gates(r, ref.tensors.at("logits").data<double>() + t * r.logit_row, k, g.data());
        else for (int64_t h = 0; h < H; ++h) g[h] = k[h];
        for (int64_t h = 0; h < H; ++h) gates.set((b * H + h) * r.q_len + i, g[h]);
      }
    }
    for (int64_t row = 0; row < gates.numel(); ++row) {
      const double g = gates.get(row);
      for (int64_t x = 0; x < hd; ++x) o.set(row * hd + x, g == 0 ? 0.0 : g * head_out.get(row * hd + x));
      lse.set(row, g == 0 ? -INFINITY : head_lse.get(row));
    }
    const RowSelection sel{ref.checked_rows, ref.total_rows};
    report.outputs.push_back(check_tol(decl("O"), o, got.at("O"), ref.baseline_err.at("O"), sel));
    report.outputs.push_back(check_tol(decl("LSE"), lse, got.at("LSE"), ref.baseline_err.at("LSE"), sel));
    report.outputs.push_back(check_tol(decl("gates"), gates, got.at("gates"), ref.baseline_err.at("gates")));
    return report;
  }

  // Only the running heads' attention: each token runs shared_heads + routed_k of q_heads.
  Work work(const Case& c) const override {
    const MohStages st = moh_stages(c);
    const RouterParams& r = st.router;
    const double active = static_cast<double>(active_heads(r)) / r.heads, tokens = static_cast<double>(r.batch) * r.q_len;
    const double es = static_cast<double>(dtype_size(c.dtype));
    Work w = AttentionSpec::work(c);
    w.flops *= active;
    w.bytes += tokens * r.heads * 4.0 + tokens * active_heads(r) * 4.0;  // gates, heads_idx
    w.bytes -= (1.0 - active) * tokens * r.heads * r.head_dim * es;      // the skipped heads' Q is not read
    if (r.learned) {
      const double d = static_cast<double>(c.i64("d_model"));
      w.flops += 2.0 * tokens * r.logit_row * d;
      w.bytes += (tokens + r.logit_row) * d * es;
    }
    return w;
  }

  // What moh trades: the fraction of heads each token runs (the attention flops it keeps).
  Json quality(const Case& c, const TensorMap& inputs, const TensorMap& outputs) const override {
    Json q = AttentionSpec::quality(c, inputs, outputs);
    const HostTensor& g = outputs.at("gates");
    int64_t running = 0;
    for (int64_t e = 0; e < g.numel(); ++e) running += g.get(e) != 0;
    q["active_head_fraction"] = static_cast<double>(running) / static_cast<double>(g.numel());
    return q;
  }

  std::optional<RelatedCase> baseline(const Case& c) const override {
    RelatedCase r{"baseline", "gqa", c.phase, {}, c.dtype};  // every head running, over the same cache
    for (const auto& [name, v] : c.params.items())
      if (name != "router" && name != "shared_heads" && name != "routed_k" && name != "d_model") r.params[name] = v;
    return r;
  }
};

}  // namespace attnbench::moh

ATTNBENCH_METHOD(attnbench::moh::Moh);
