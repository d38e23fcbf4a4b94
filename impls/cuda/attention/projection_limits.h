// What one projection launch (projection_launch.h) can address, for the supports() of the impls
// that run the projection stage (mla_cuda.cpp, moh_cuda.cpp). Host C++ only.
#pragma once

#include <cstdint>
#include <string>

#include "attnbench/error.h"
#include "projection_launch.h"

namespace attnbench::cuda::projection_kernel {

// Why the projection `stage` does not fit one launch's grid; empty when it does.
inline std::string projection_limits(const char* stage, const projection::ProjectionParams& s) {
  const int64_t rows_per_tile = s.m <= kRowsSmall ? kRowsSmall : kRowsLarge;
  if ((int64_t{s.m} + rows_per_tile - 1) / rows_per_tile > kMaxRowTiles)
    return cat(stage, ": ", s.m, " rows per problem exceed the projection grid (", kMaxRowTiles, " tiles of ", rows_per_tile,
               ")");
  if (int64_t{s.outer} * s.inner > kMaxProblems)
    return cat(stage, ": ", int64_t{s.outer} * s.inner, " problems exceed the projection grid");
  return {};
}

}  // namespace attnbench::cuda::projection_kernel
