// The projection stage: a batch of small matrix products with a pass-through tail, the step MLA's
// two forms put around attention (reference/attention/mla_common.h builds its four uses).
//
// For problem z = (o, i), o < outer, i < inner, and each row r < m (rows r ≥ kv_len[o] skipped
// when limit_rows, the cache rows past a sequence's length):
//   Y[z][r][c]     = Σ_{x<k} X[z][r][x] · W[i][c·w_n + x·w_k]     c < n    (fp32 sums)
//   Y[z][r][n + t] = X[z][r][k + t]                                t < pass (copied)
// with X[z][r][x] = x_ptr[o·x_outer + i·x_inner + r·x_row + x] and Y likewise (y_outer, y_inner,
// y_row); W is shared by the outer problems. X, W and Y are in one storage dtype (Y in f32 with
// y_f32, without rounding); each output rounds once from fp32. w_n = k, w_k = 1 reads W as [n][k] (Y = X·Wᵀ); w_n = 1, w_k = n as
// [k][n] (Y = X·W).
//
// Light on purpose: CUDA device code includes it and the Vulkan shader reads the field list.
#ifndef ATTNBENCH_PROJECTION_COMMON_H
#define ATTNBENCH_PROJECTION_COMMON_H

#define ATTNBENCH_PROJECTION_FIELDS(X)                                       \
  X(i32, outer)                                                              \
  X(i32, inner)                                                              \
  X(i32, m)                                                                  \
  X(i32, n)                                                                  \
  X(i32, k)                                                                  \
  X(i32, pass)       /* columns of X after its k copied to Y after its n */   \
  X(i32, limit_rows) /* 1: rows r >= kv_len[o] are skipped */                \
  X(i32, x_outer)                                                            \
  X(i32, x_inner)                                                            \
  X(i32, x_row)                                                              \
  X(i32, w_inner)                                                            \
  X(i32, w_n)                                                                \
  X(i32, w_k)                                                                \
  X(i32, y_outer)                                                            \
  X(i32, y_inner)                                                            \
  X(i32, y_row)                                                              \
  X(i32, y_f32)      /* 1: Y is f32, not the storage dtype (moh's logits) */

#ifdef __cplusplus
#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench::projection {

ATTNBENCH_PARAM_STRUCT(ProjectionParams, ATTNBENCH_PROJECTION_FIELDS);

// Rows of problem (o, ·) the stage computes.
ATTNBENCH_HD inline int64_t rows_of(const ProjectionParams& s, const int32_t* kv_len, int64_t o) {
  if (!s.limit_rows) return s.m;
  const int64_t n = kv_len[o];
  return n < 0 ? 0 : (n > s.m ? s.m : n);
}

}  // namespace attnbench::projection
#endif  // __cplusplus
#endif
