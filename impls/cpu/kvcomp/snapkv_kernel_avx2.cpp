// The SnapKV kernels for the x86-64-v3 baseline (AVX2 + FMA + F16C).
#include "snapkv_kernel.h"

#include "../runtime/simd_avx2.h"
#include "../runtime/simd_rows.h"

#define SNAP_SIMD ::attnbench::cpu::Avx2
#define SNAP_NS avx2
#include "snapkv_kernel.inl"

namespace attnbench::cpu::snapkv {

const Kernels& kernels_avx2() {
  static const Kernels table{avx2::W, &avx2::window_scores, &avx2::pool_group};
  return table;
}

}  // namespace attnbench::cpu::snapkv
