// knorm — key-norm scoring: keep the tokens whose keys have the smallest L2 norm. The floor every
// scorer must beat: it reads neither queries nor attention.
// Catalog: B-KNORM. Paper: Devoto et al. 2024, A Simple and Effective L2 Norm-Based Strategy for
// KV Cache Compression. Cross-checked against kvpress's KnormPress (score = −‖k‖₂).
//
// Semantics (spec_version 1), per sequence b and KV head g (row = b·kv_heads + g), T = kv_len:
//   score_j = −‖k_{g,j}‖₂ for every token j (no forced tokens); keep the top `budget` by the tie
//   rule (larger score, then smaller index), indices ascending; everything when budget ≥ T.
// Differences from kvpress: the budget is kept tokens per KV head (kvpress: a compression ratio,
// int(T·(1 − ratio)) kept); ties go to the smaller index (torch.topk leaves them unspecified).
//
// Inputs: the family's G-KV cache (k, v, q_future; 32-query window, so at equal shapes knorm,
// snapkv and streaming_llm compress the same cache). G-KV plants its sinks, needles and recency
// ramp by adding to the keys, so the tokens that draw attention have the largest norms and knorm
// evicts them: on G-KV it is an adversarial floor. Devoto et al. observe the reverse in trained
// models (low-norm keys draw the most attention); G-KV does not model that, so knorm's fidelity
// here says nothing of its fidelity on a real cache.
//
// Outputs: the family's compacted cache (scored_selection.h), kept_idx checked SET with
//   tie_c = 1.02·(d + 3):
// an fp32 Σ k_x² is within (d+1)·u of the truth (u = 2^-24), so a norm or a squared norm compared
// in fp32 is within ((d+1)/4 + 1/2)·ε of its value (ε = 2u); two scores, times two.
#include <cmath>

#include "scored_selection.h"

namespace attnbench::kvcomp {
namespace {

class Knorm final : public ScoredSelection {
 public:
  Knorm()
      : ScoredSelection({.name = "knorm",
                         .summary = "key-norm scoring: keep the tokens with the smallest key norms (the floor)",
                         .catalog_id = "B-KNORM",
                         .paper = "Devoto et al. 2024, A Simple and Effective L2 Norm-Based Strategy for KV Cache Compression",
                         .spec_version = 1}) {
    schema_.add({"budget", ParamType::Int, Value(int64_t{256}), {}, 1.0, 1e7, {}, "kept tokens per KV head"});
    add_n_future();
    schema_.add({"ties", ParamType::Bool, Value(false), {}, {}, {}, {},
                 "G-KV plants exact ties: odd prefix positions duplicate the key before them"});
  }

 protected:
  Keep keep(const Case&) const override { return {}; }

  GkvConfig gkv(const Case& c) const override {
    GkvConfig cfg = ScoredSelection::gkv(c);
    cfg.ties = c.flag("ties");
    return cfg;
  }

  void score(const Case& c, const TensorMap& in, int64_t row, double* out) const override {
    const int64_t T = c.i64("kv_len"), d = c.i64("head_dim");
    const std::vector<double> k = rows_f64(in.at("k"), row * T, T, d);
    for (int64_t j = 0; j < T; ++j) {
      double n2 = 0;
      for (int64_t x = 0; x < d; ++x) n2 += k[j * d + x] * k[j * d + x];
      out[j] = -std::sqrt(n2);
    }
  }

  double tie_c(const Case& c, const TensorMap&, int64_t) const override {
    return 1.02 * static_cast<double>(c.i64("head_dim") + 3);
  }

  // A multiply-add per element of every key, which is read once.
  Work score_work(const Case& c) const override {
    const double keys = static_cast<double>(c.i64("batch") * c.i64("kv_heads") * c.i64("kv_len"));
    const double d = static_cast<double>(c.i64("head_dim"));
    return {2 * keys * d, keys * d * static_cast<double>(dtype_size(c.dtype)), Bound::read};
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Knorm);
