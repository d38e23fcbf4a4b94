// How many consecutive threads share a key's row in the KV scorers that split it word by word
// (key_rows.cuh): one per 16-byte word of the row (per element when rows are not whole words), a
// power of two up to the warp. Host code: the impls plan their grids with it.
#pragma once

#include "reference/kvcomp/scored_selection_common.h"

namespace attnbench::cuda::kv {

inline int key_lanes(const kvcomp::SelectionParams& s) {
  const int per_word = 16 / s.elem_bytes, n = s.head_dim % per_word == 0 ? s.head_dim / per_word : s.head_dim;
  int lanes = 1;
  while (lanes < 32 && lanes < n) lanes *= 2;
  return lanes;
}

}  // namespace attnbench::cuda::kv
