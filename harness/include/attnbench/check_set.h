// SET check class (docs/design.md "Checks"; derivation in docs/methodology.md "SET, SEMI and STAT"): index
// sets that a method selects by score, and outputs gathered at those indices.
//
//   check_set     the impl's kept set of each row equals the reference's, except exchanges between
//                 candidates whose fp64 reference scores lie within the tie band of the row's
//                 threshold s_k (the lowest reference score kept):
//                     band = ε_fp32 · (c_rel·|s_k| + c_abs·max_j |s_j|)
//                 c_rel comes from the method (a bound on the relative error of an fp32 score, per
//                 row); c_abs covers absolute errors (underflow, flush to zero). Each exchange is a
//                 tie swap; n_tie_swaps is recorded and capped by the number of in-band candidates.
//   check_gather  an output derived from the indices (compacted K/V) equals a gather of a source
//                 tensor at the impl's OWN indices, bit for bit.
//
// Index outputs are [rows..., capacity] with a length tensor [rows...] (OutputDecl::length) and
// ascending entries (checked by check_layout first). Scores are [rows..., n]: the reference score
// of every index 0..n−1; +inf marks an index that is always kept (e.g. SnapKV's observation
// window), which is not a candidate and must be in both sets.
#pragma once

#include <vector>

#include "attnbench/method.h"
#include "attnbench/tensor.h"

namespace attnbench {

inline constexpr double kEpsF32 = 0x1p-23;  // machine epsilon of fp32 (2u)

struct TieBand {
  std::vector<double> c_rel;  // per row
  double c_abs = 1.0;
};

OutputCheck check_set(const OutputDecl& d, const HostTensor& ref, const HostTensor& ref_len, const HostTensor& got,
                      const HostTensor& got_len, const HostTensor& scores, const TieBand& band);

// got [rows..., capacity, inner...] against source [rows..., n, inner...] at idx [rows..., capacity]
// for positions below len [rows...]; bytes compared exactly.
OutputCheck check_gather(const OutputDecl& d, const HostTensor& source, const HostTensor& idx, const HostTensor& len,
                         const HostTensor& got);

}  // namespace attnbench
