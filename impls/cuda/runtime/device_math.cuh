// Device helpers every kernel family uses.
#pragma once

namespace attnbench::cuda {

// −inf as a bit pattern (no dependence on math headers or fast-math flags).
__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000u); }

}  // namespace attnbench::cuda
