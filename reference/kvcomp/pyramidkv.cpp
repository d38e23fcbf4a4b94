// pyramidkv — SnapKV's scores under a pyramid of per-layer budgets: lower layers keep more, higher
// layers less, the mean over the layers the nominal budget. Catalog: B-PYRAMIDKV. Paper: Cai et
// al. 2024, PyramidKV: Dynamic KV Cache Compression based on Pyramidal Information Funneling.
// Cross-checked against kvpress's PyramidKVPress (whose budget formula follows the authors'
// KVCache-Factory).
//
// Semantics (spec_version 1), one layer `layer` of n_layers, per sequence b and KV head g, with
// T = kv_len, w = obs_window, B = budget (kept tokens per KV head averaged over the layers, the
// window included), B' = B − w the mean prefix tokens kept, β = beta, in double precision:
//   lo = B'/β, hi = 2B' − lo; if hi ≥ T − w: hi = T − w, lo = 2B' − hi;
//   layer l keeps n_l = round(hi − l·(hi − lo)/(n_layers − 1)) prefix tokens (round: half to even)
//   plus the window, so the layers' mean is B; then SnapKV: the window forced, the top n_l prefix
//   tokens by the SnapKV scorer (snapkv_scorer.h: window w, pooling), everything when n_l + w ≥ T.
// In the family's terms: snapkv's selection with a uniform budget n_l + w for the layer.
//
// Differences from the references, and why:
//   - kvpress's PyramidKVPress counts the window inside n_l and falls back to SnapKV's uniform
//     budget whenever the pyramid's smallest layer would keep less than the window (lo < w), which
//     at β = 20 is every budget below 20 windows (B < 640 at w = 32): at the compression points
//     that matter the pyramid vanishes. This follows the authors' formula (their KVCache-Factory,
//     and HeadKV's copy of it), where n_l counts prefix tokens only and the pyramid always applies.
//   - the authors round down with integer division (lo = B' // β, step = (hi − lo) // (L − 1));
//     this rounds n_l once, to nearest, so the mean over the layers stays B.
//   - B is a token count (kvpress and the authors derive it from a ratio or a capacity).
//   - defaults: window 32 and max pooling with kernel 7, snapkv's here, so pyramidkv at a layer
//     whose n_l + w equals B keeps exactly what snapkv keeps; n_layers ≥ 2.
//   - snapkv's differences (ties, fp32 probabilities, avg pooling) apply.
#include <cmath>

#include "attnbench/error.h"
#include "snapkv_scorer.h"

namespace attnbench::kvcomp {
namespace {

class Pyramidkv final : public SnapkvScored {
 public:
  Pyramidkv()
      : SnapkvScored({.name = "pyramidkv",
                      .summary = "SnapKV scores with a pyramid of per-layer budgets (more in lower layers)",
                      .catalog_id = "B-PYRAMIDKV",
                      .paper = "Cai et al. 2024, PyramidKV: Dynamic KV Cache Compression based on Pyramidal Information Funneling",
                      .spec_version = 1}) {
    add_window(32);
    add_budget("kept tokens per KV head averaged over the layers, the observation window included");
    add_layer(2);
    schema_.add({"beta", ParamType::Float, Value(20.0), {}, 1.0, 1e6, {}, "the pyramid's steepness: the top layer keeps about budget/beta"});
    add_pooling("max", 7);
    add_n_future();
    add_ties();
  }

 protected:

  // n_l + w of the header.
  int64_t budget(const Case& c) const override {
    const double T = static_cast<double>(c.i64("kv_len")), w = static_cast<double>(c.i64("obs_window"));
    const double prefix = static_cast<double>(c.i64("budget")) - w, beta = c.f64("beta");
    double lo = prefix / beta, hi = 2 * prefix - lo;
    if (hi >= T - w) {
      hi = T - w;
      lo = 2 * prefix - hi;
    }
    const double step = (hi - lo) / static_cast<double>(c.i64("n_layers") - 1);
    return static_cast<int64_t>(std::nearbyint(hi - static_cast<double>(c.i64("layer")) * step)) + c.i64("obs_window");
  }
};

}  // namespace
}  // namespace attnbench::kvcomp

ATTNBENCH_METHOD(attnbench::kvcomp::Pyramidkv);
