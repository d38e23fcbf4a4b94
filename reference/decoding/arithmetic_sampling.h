// What arithmetic_sampling's distribution test (arithmetic_sampling.cpp) and its tests share.
#pragma once

#include <vector>

namespace attnbench::decoding {

// The joint law of the tokens two codes c and frac(c + shift) pick, c uniform on [0, 1), from the
// buckets [F(v − 1), F(v)) of p in token-id order: joint[v·V + w], the measure of the c whose
// code picks v while the shifted one picks w (0 where the lattice never pairs them).
std::vector<double> lattice_pair_probabilities(const std::vector<double>& p, double shift);

}  // namespace attnbench::decoding
