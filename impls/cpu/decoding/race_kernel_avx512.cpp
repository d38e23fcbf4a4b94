// The race kernel for AVX-512 (F/BW/VL/DQ). This file alone is compiled with those flags
// (impls/cpu/CMakeLists.txt); it runs only where best_isa() found them.
#include "race_kernel.h"

#include "../runtime/simd_avx512.h"
#include "../runtime/simd_math_avx512.h"

#define RACE_SIMD ::attnbench::cpu::Avx512
#define RACE_MATH ::attnbench::cpu::Avx512Math
#define RACE_NS avx512
#include "race_kernel.inl"

namespace attnbench::cpu::spec {

const RaceKernels& race_kernels_avx512() {
  static const RaceKernels table{avx512::W, &avx512::race};
  return table;
}

}  // namespace attnbench::cpu::spec
