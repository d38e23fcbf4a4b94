// What gumbel_topk's distribution test (gumbel_topk.cpp) and its tests share: the law of an
// unordered sample of k tokens drawn without replacement.
#pragma once

#include <cstdint>
#include <vector>

namespace attnbench::decoding {

// The probability of each k-set of n outcomes (p: their probabilities, summing to 1) when k are
// drawn one by one without replacement, each from p renormalised over those not yet drawn, indexed
// by k_set_rank: for a set S, the sum over its orders of the product of the successive conditional
// probabilities, by a recursion over S's subsets (2^k terms).
std::vector<double> k_set_probabilities(const std::vector<double>& p, int64_t k);
// The colex rank of a k-set given as its members' indices in ascending order: Σ_j C(s_j, j + 1).
int64_t k_set_rank(const std::vector<int64_t>& sorted);

}  // namespace attnbench::decoding
