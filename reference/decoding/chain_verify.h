// Chain verification, speculative_sampling's semantics (reference/decoding/speculative_sampling.cpp),
// shared with the methods that verify a chain after drafting it their own way (specdecpp: each row
// verifies as many drafts as its stopping rule drafted). Row r verifies its first lengths[r] ≤ K
// drafts (every row K when `lengths` is empty); the draw indices keep the stride K, so a row's
// draws do not depend on its length, and a row of length K is speculative_sampling's row.
#pragma once

#include <cstdint>
#include <vector>

#include "attnbench/check_stat.h"
#include "attnbench/method.h"
#include "speculative_sampling_common.h"

namespace attnbench::decoding {

// tokens [R, K+1] (STAT in distribution mode, else SEMI), emitted, accepted_token_num,
// emitted_draft_token_num; check-only accept_margin, accept_each, race_token, race_gap.
std::vector<OutputDecl> chain_verify_outputs(const SpeculativeParams& s);

// The fp64 reference of every row (inputs target_probs, draft_probs, draft_token_ids).
Reference chain_verify_reference(const SpeculativeParams& s, uint64_t seed, const TensorMap& in,
                                 const std::vector<int64_t>& lengths);

// The SEMI check of chain_verify_outputs' outputs (the invariants of every row, the cut at each
// row's first boundary event, or at forced_cut[r] when that is earlier: a row whose length itself
// was a boundary decision is cut at 0); `stat`, when given, is the distribution test of the tokens.
CheckReport chain_verify_check(const SpeculativeParams& s, const TensorMap& in, const Reference& ref, const TensorMap& got,
                               const std::vector<int64_t>& lengths, const std::vector<int64_t>& forced_cut,
                               const std::vector<GofResult>* stat);

}  // namespace attnbench::decoding
