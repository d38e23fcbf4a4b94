// The distribution mode of speculative_sampling (docs/design.md "Checks"), shared by its check, its
// quality figures and the power twins in tests.
//
// Cells of output position t ∈ [0, K]: token x ∈ [0, V) emitted at t, and one more cell, "nothing
// emitted at t" (the row stopped before t). Under the correct algorithm, with p̄, q̄ the f32 inputs
// normalised, a_t(x) = min(1, p_t(x)/q_t(x)), α_t = Σ_x q̄_t(x)·a_t(x), r̄_t = max(0, p_t − q_t)
// normalised (p̄_t when that is all zero) and R_t = Π_{s<t} α_s the chance to reach t:
//   P(x at t) = R_t·(q̄_t(x)·a_t(x) + (1 − α_t)·r̄_t(x))  for t < K,   R_K·p̄_K(x) at t = K,
//   P(nothing at t) = 1 − R_t.
// The token part is R_t·p̄_t(x) up to the f32 rounding of the inputs (the rejection sampling
// theorem); tests check that to 1e-6.
#pragma once

#include <vector>

#include "attnbench/check_stat.h"
#include "attnbench/tensor.h"
#include "speculative_sampling_common.h"

namespace attnbench::decoding {

// One chain's distributions, the f32 inputs widened: p[t] for t ∈ [0, K], q[t] for t < K.
struct Chain {
  std::vector<std::vector<double>> p, q;
};

Chain chain_of(const SpeculativeParams& s, const TensorMap& inputs, int64_t prob_row);
std::vector<double> normalised(const std::vector<double>& w);
// α_t: the probability that draft position t is accepted, given the draft is drawn from q̄_t.
double acceptance_probability(const Chain& chain, int64_t t);
// Cell probabilities per position (V + 1 cells each, the last "nothing emitted").
std::vector<std::vector<double>> emitted_cells(const Chain& chain);
// The same cells counted from a run's outputs (tokens, emitted).
std::vector<std::vector<int64_t>> emitted_counts(const SpeculativeParams& s, const TensorMap& outputs);
// One chi-square test per position of the outputs against emitted_cells of probability row 0.
std::vector<GofResult> position_tests(const SpeculativeParams& s, const TensorMap& inputs, const TensorMap& outputs);

}  // namespace attnbench::decoding
