// The decoding family's distribution mode (docs/design.md "Checks"): `draws` rows share one input
// (a row of logits, a chain of distributions) and their tokens are tested against its law (STAT).
// Every method with the mode takes the same two rules on its parameters.
#pragma once

#include <cstdint>
#include <string>

#include "attnbench/error.h"
#include "attnbench/params.h"

namespace attnbench::decoding {

// The largest vocabulary a chi-square test over tokens takes (cells with a few expected counts).
inline constexpr int64_t kMaxDistributionVocab = 1024;

// draws > 0 needs batch = 1 (every row reads input row 0: `shared` says what it is) and a
// vocabulary of at most kMaxDistributionVocab.
inline void add_distribution_rules(ParamSchema& schema, const std::string& shared) {
  schema.rule("draws > 0 needs batch = 1", [shared](const Params& p, const std::string&) -> std::string {
    if (p.i64("draws") == 0 || p.i64("batch") == 1) return {};
    return cat("batch=", p.i64("batch"), " with draws=", p.i64("draws"), "; distribution mode broadcasts ", shared);
  });
  schema.rule(cat("draws > 0 needs vocab <= ", kMaxDistributionVocab), [](const Params& p, const std::string&) -> std::string {
    if (p.i64("draws") == 0 || p.i64("vocab") <= kMaxDistributionVocab) return {};
    return cat("vocab=", p.i64("vocab"), " is too large for a distribution test (at most ", kMaxDistributionVocab, ")");
  });
}

}  // namespace attnbench::decoding
