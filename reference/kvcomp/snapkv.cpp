// snapkv — observation-window voting with pooling: one-shot KV-cache compression after prefill.
// Catalog: B-SNAPKV. Paper: Li et al. 2024, SnapKV: LLM Knows What You are Looking for
// Before Generation. Cross-checked against kvpress's SnapKVPress and HeadKV's snapkv_utils.
//
// Semantics (spec_version 1), per sequence b and KV head g, with T = kv_len, w = obs_window,
// G = q_heads/kv_heads, P = T − w prefix tokens, s = 1/√head_dim:
//   1. Window scores. Query i ∈ [0, w) of the window sits at position T − w + i and sees keys
//      j ≤ T − w + i (causal, bottom-right aligned). P_{h,i,j} = softmax_j(s·q_{h,i}·k_j) over ALL
//      its visible keys; a_{h,j} = (1/w)·Σ_i P_{h,i,j} for prefix keys j < P.
//   2. Pooling along j within the prefix: kernel pool_kernel (odd, radius r = (kernel−1)/2, same
//      padding): `max` over the in-range elements; `avg`, their sum divided by their count
//      (padding ignored); `avg_padded`, their sum divided by the kernel (padding counted as zeros).
//   3. GQA reduction: score_{g,j} = (1/G)·Σ_{h of g} pooled_{h,j}.
//   4. Selection: the top (budget − w) prefix tokens by the tie rule (larger score first, then
//      smaller index), plus the whole window [P, T); kept indices ascending.
//   budget counts every kept token, the window included: budget ≥ obs_window is a schema rule.
//   When obs_window ≥ kv_len or budget ≥ kv_len everything is kept (indices 0..T−1).
//
// In the family's terms (scored_selection.h): no sinks, the window forced (recent = obs_window),
// the prefix the candidates, score = step 3, a uniform budget per KV head; steps 1–3 are the SnapKV
// scorer (snapkv_scorer.h), which pyramidkv, headkv, adakv, tova, sagekv and h2o share.
//
// Differences from kvpress's SnapKVPress, and why:
//   - defaults: obs_window 32 and max pooling with kernel 7 (HeadKV's snapkv_utils and the SnapKV
//     repository's examples); kvpress defaults to window 64 and average pooling with kernel 5.
//   - average pooling: kvpress's F.avg_pool1d counts the padding (divides by the kernel at the
//     ends too), which `avg_padded` reproduces; `avg` divides by the in-range count, so the first
//     and last r prefix keys are not penalised for sitting at an end. The kept sets differ where a key
//     near an end competes with one inside (on the ci suite's avg case — GQA 7, 1000 tokens,
//     budget 100, kernel 5 — by one token in one of its two rows).
//   - the budget is kept tokens per KV head, window included (kvpress: int(T·(1 − ratio)) kept,
//     window included); ties go to the smaller index (torch.topk leaves them unspecified).
//   - probabilities are accumulated in fp32 (kvpress casts them back to the query dtype first).
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
#include "attnbench/error.h"
#include "snapkv_scorer.h"

namespace attnbench::kvcomp {
namespace {

class Snapkv final : public SnapkvScored {
 public:
  Snapkv()
      : SnapkvScored({.name = "snapkv",
                      .summary = "observation-window voting with pooling: keep the top prefix tokens plus the window",
                      .catalog_id = "B-SNAPKV",
                      .paper = "Li et al. 2024, SnapKV: LLM Knows What You are Looking for Before Generation",
                      .spec_version = 1}) {
    add_window(32);
    add_budget("kept tokens per KV head, the observation window included");
    add_pooling("max", 7);
    add_n_future();
    add_ties();
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Snapkv);
