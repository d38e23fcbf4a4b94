// The SnapKV kernels for AVX-512 (F/BW/VL/DQ). This file alone is compiled with those flags
// (impls/cpu/CMakeLists.txt); it runs only where best_isa() found them.
#include "snapkv_kernel.h"

#include "../runtime/simd_avx512.h"
#include "../runtime/simd_rows.h"

#define SNAP_SIMD ::attnbench::cpu::Avx512
#define SNAP_NS avx512
#include "snapkv_kernel.inl"

namespace attnbench::cpu::snapkv {

const Kernels& kernels_avx512() {
  static const Kernels table{avx512::W, &avx512::window_scores, &avx512::pool_group};
  return table;
}

}  // namespace attnbench::cpu::snapkv
