// G-DIST (the decoding family's generator): synthetic target/draft distribution pairs for samplers and speculative
// verification, deterministic from the case seed (input domain), built from + − × ÷ √ only so
// every machine generates the same bits.
//
// A target distribution p over `vocab` tokens, by shape:
//   zipf     w_x = 1/((ρ_x+1)·√(ρ_x+1)) (Zipf, s = 1.5) over a random ranking ρ (tokens sorted by
//            a uniform key, ties by index)
//   peaked   one random token holds m ∈ [0.5, 0.99); the rest share 1 − m by uniform weights
//   flat     w_x = 1 + ½·u_x (high entropy)
//   bimodal  two random tokens hold 0.3 + 0.15·u each; the rest share what is left uniformly
//   ties     w_x ∈ {1, 2, 4} by thirds of u_x: many exactly equal probabilities
//   onehot   one random token holds all the mass; every other token has 0 (a logit of −inf)
// A draft distribution q next to it, by relation:
//   perturbed    q_x ∝ p_x·(0.25 + 1.5·u'_x) (a fresh uniform per token)
//   independent  q drawn from the same shape with its own randomness
//   equal        q = p, bit for bit
//   disjoint     tokens split in two by u''_x < ½ (token 0 always on p's side, token 1 on q's):
//                p lives on one side, q (same shape, its own randomness) on the other
// Each distribution is normalised in fp64 (sequential sum) and rounded once to f32.
//
// Randomness of the distribution at slot i (a (row, position) pair) comes from the input streams
// named after the tensor it fills ("target_probs", "draft_probs"): uniform n = i·vocab + x for
// token x, and "<tensor>.row" uniforms 4i .. 4i+3 for per-distribution scalars; the disjoint split
// uses "target_probs.split" uniform i·vocab + x. So p does not depend on the relation chosen for q,
// except that `disjoint` restricts p to its side of the split.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnbench::decoding {

enum class DistShape { zipf, peaked, flat, bimodal, ties, onehot };
enum class DraftRelation { perturbed, independent, equal, disjoint };

DistShape parse_dist_shape(const std::string& name);
DraftRelation parse_draft_relation(const std::string& name);

// Probabilities (fp64, normalised) of the distribution of `tensor` at slot i, restricted to the
// tokens where mask[x] is true (all when mask is empty).
std::vector<double> gdist(DistShape shape, const std::string& tensor, uint64_t seed, int64_t slot, int64_t vocab,
                          const std::vector<char>& mask = {});

// `tokens` in order of a uniform key each (key(x), ascending), ties by index: G-DIST's Zipf
// ranking, and frspec's token frequencies.
std::vector<int64_t> rank_by_key(std::vector<int64_t> tokens, const std::function<double(int64_t)>& key);

// The disjoint split of slot i: true on p's side.
std::vector<char> disjoint_split(uint64_t seed, int64_t slot, int64_t vocab);

// q next to p (fp64, normalised; `p` already normalised).
std::vector<double> draft_for(DraftRelation rel, DistShape shape, const std::vector<double>& p, uint64_t seed,
                              int64_t slot, int64_t vocab);

// A token drawn from q by inverse CDF (q's f32 values widened, fp64 cumulative sum in token order)
// with an fp64 input uniform u ∈ [0, 1): the first token whose cumulative mass passes u·Σq; the last
// token with mass when rounding carries u·Σq to the total; −1 when q has no mass. The drafts of
// speculative_sampling and tree_verify.
int64_t inverse_cdf_token(const std::vector<double>& q, double u);

// A centred uniform of variance 1 from an fp64 input uniform u ∈ [0, 1): √3·(2u − 1), the synthetic
// weights' and hidden states' draw (frspec, jakiro).
inline double unit_uniform(double u) { return 1.7320508075688772 * (2.0 * u - 1.0); }

}  // namespace attnbench::decoding
