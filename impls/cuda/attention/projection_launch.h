// The interface between the projection stage's host code (mla_cuda.cpp, moh_cuda.cpp) and its kernel
// (projection.cu; semantics: reference/attention/projection_common.h). Light on purpose.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention_launch.h"  // Elem
#include "reference/attention/projection_common.h"

namespace attnbench::cuda::projection_kernel {

struct Args {
  projection::ProjectionParams s;
  const void* x;          // X, Elem, addressed by s's x_* strides
  const void* w;          // W, Elem, [inner] matrices w_inner apart
  const int32_t* kv_len;  // [outer] with s.limit_rows, else unused (may be null)
  void* y;                // Y, Elem (f32 with s.y_f32), addressed by s's y_* strides
};

// The CTA tile: kRowsSmall or kRowsLarge rows (small when m ≤ kRowsSmall: decode's single query
// row) by kCols columns, kDepth of k per shared-memory step, kThreads threads each holding a
// (rows / 16) × 4 register block.
inline constexpr int kThreads = 256, kCols = 64, kDepth = 16, kRowsSmall = 16, kRowsLarge = 64;

// Grid: x = problem (o, i), y = row tile, z = column tile; what a launch cannot address.
inline constexpr int64_t kMaxRowTiles = 65535;
inline constexpr int64_t kMaxProblems = (int64_t{1} << 31) - 1;

cudaError_t project_launch(attn::Elem e, const Args& a, cudaStream_t stream);

}  // namespace attnbench::cuda::projection_kernel
