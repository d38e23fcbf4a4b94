// sampling — temperature, top-k, top-p and min-p, alone or in any combination, then one token.
// Catalog: C-SAMPLERS. What serving engines (vLLM, SGLang, llama.cpp) and FlashInfer's sampling
// kernels offer; the processors as HF transformers defines them.
//
// Semantics (spec_version 1): the decoding family's sampler contract (sampler.h) with no processor
// of its own: the standard chain in HF transformers' order (temperature, top_k, top_p, min_p),
// each over what the steps before it kept, then the exponential race over the kept tokens.
// Choices, and where they differ from the code they come from:
//   - temperature 0 is greedy (argmax, the smaller index on ties). HF refuses T = 0 and vLLM maps
//     it to greedy; a greedy row's kept set is its one token.
//   - top_k keeps every token tied with the k-th largest value (HF's TopKLogitsWarper compares
//     with torch.topk's k-th value, so it keeps those ties too); top_k ≥ the finite count is off.
//   - top_p keeps, in order of z descending and the smaller index first on ties, each token whose
//     preceding mass is below top_p: the smallest head holding at least top_p. HF sorts ascending
//     and removes tokens whose cumulative mass is at most 1 − top_p, which is the same set up to
//     rounding and the order of ties; torch's sort leaves that order unspecified, this fixes it.
//     HF's min_tokens_to_keep = 1 holds here without a parameter: the first token has no mass
//     before it.
//   - min_p keeps p ≥ min_p · max p over the tokens top_p kept (HF's MinPLogitsWarper).
//   - The token is drawn by the exponential race (race.h), not by the inverse CDF torch's
//     multinomial uses or FlashInfer's rejection over pivots: the same distribution, and a draw
//     that is a function of (seed, row, token) alone, so every backend can be checked token for
//     token (SEMI) and by distribution (STAT).
// A backend finds the top-k, top-p and min-p thresholds without sorting the row (each backend's
// sampler stage says how); the reference sorts.
#include "attnbench/method.h"
#include "sampler.h"

namespace attnbench::decoding {

class Sampling final : public Sampler {
 public:
  Sampling()
      : Sampler({.name = "sampling",
                 .summary = "temperature, top-k, top-p and min-p in HF transformers' order, then one token by the race",
                 .catalog_id = "C-SAMPLERS",
                 .paper = "Holtzman et al. 2020, The Curious Case of Neural Text Degeneration (top-p); "
                          "Nguyen et al. 2024, Turning Up the Heat: Min-p Sampling",
                 .spec_version = 1}) {
    add_sampling_params();
  }
};

}  // namespace attnbench::decoding

ATTNBENCH_METHOD(attnbench::decoding::Sampling);
