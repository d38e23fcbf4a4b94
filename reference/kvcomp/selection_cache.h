// The selection cache of a selection-only method (TokenSelect's): a decode step whose query is
// close enough to the query that made the last selection reuses that selection instead of scoring
// the cache again. Per score row (the sequence, or a (sequence, KV head)), with the row's query
// heads' decode queries flattened into one vector q (n·head_dim values) and q_c the cached one's:
//   cos  = q·q_c / (‖q‖·‖q_c‖)                 (fp32 on the backends, fp64 here)
//   hit  = cos ≥ threshold
//   kept = forced ∪ topk_cached[row] on a hit, else forced ∪ the row's fresh top-k (the family's)
// The forced tokens are the current step's (the sinks and the local window now), as the authors'
// retriever rebuilds them at every step around the cached top-k.
//
//   inputs   q_cached [batch, q_heads, 1, head_dim] (the cached selection's query, planted at the
//            case's cosine `similarity` to q over each score row: q_c = ρ·q + √(1 − ρ²)·‖q‖·u, u a
//            seeded unit vector orthogonal to q, stream "cache.direction"); topk_cached [score
//            rows, top_k] i32 ascending: the selection q_c made one step earlier — its vote over
//            this cache's candidates but the newest (a candidate only since that step)
//   outputs  cache_hit [score rows] i32, SEMI: equal to the reference's, or either where |cos −
//            threshold| is within the band of the fp32 cosine (rounding of n·head_dim products and
//            sums, two norms and a division); the kept set is then checked against the impl's own
//            decision: on a hit the cached set exactly, on a miss the family's SET check
//   quality  cache_hit_rate, and selection_bytes_per_step counts the cosine's reads and, on a
//            miss, the scorer's
// Every backend's family impl computes the cosines first and skips the scorer when every row hits.
#pragma once

#include <vector>

#include "attnbench/method.h"
#include "scored_selection_common.h"

namespace attnbench::kvcomp {

struct SelectionCacheRule {
  bool on = false;
  double threshold = 0.9;   // the authors' θ
  double similarity = 0.9;  // the planted cosine of q and q_cached
};

// The cosine of q and q_cached over each score row's heads, in fp64.
std::vector<double> cache_cosines(const SelectionParams& s, const TensorMap& in);

// The relative band of cos within which either decision is right: a bound on the fp32 cosine's
// error, times two.
double cache_cosine_band(const SelectionParams& s);

// q_cached planted at cosine `similarity` to q over each score row (the seed's own direction).
HostTensor plant_cached_query(const SelectionParams& s, const HostTensor& q, double similarity, DType dtype, uint64_t seed);

// The declaration of cache_hit.
OutputDecl cache_hit_output(const SelectionParams& s);

}  // namespace attnbench::kvcomp
